"""The interactive REPL: a prompt_toolkit prompt, slash commands, and chat turns that ESC cancels.

One conversation per session: the system prompt first, then each turn's messages. A turn runs as an
asyncio task while `CancelKeys` watches the keyboard; a cancelled or failed turn keeps only its answered
part, so the conversation sent next is always consistent (every tool call has its result).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.console import Console

from paicli import __version__
from paicli.config import Settings
from paicli.errors import EXIT_CANCELLED, EXIT_OK, PaicliError
from paicli.events import TextDelta
from paicli.llm.types import Message
from paicli.plan.model import Plan
from paicli.runtime import Runtime, build_runtime, secret_values
from paicli.ui.approval import ApprovalPrompt
from paicli.ui.commands import Outcome, SlashCompleter, find_command, split_command
from paicli.ui.keys import CancelKeys
from paicli.ui.render import ChatRenderer, one_line

PROMPT = "› "


def run_repl(settings: Settings) -> int:
    """The `paicli` entry without a subcommand; returns the exit code."""
    console = Console(highlight=False)
    renderer = ChatRenderer(console, secrets=secret_values(settings))
    return asyncio.run(_serve(settings, console, renderer))


async def _serve(settings: Settings, console: Console, renderer: ChatRenderer) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    runtime = build_runtime(settings, renderer)
    try:
        return await Repl(runtime, renderer, console).run()
    except asyncio.CancelledError:
        return EXIT_CANCELLED
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        await runtime.aclose()


def history_file(home: Path) -> History:
    folder = home / ".paicli"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(folder / "history"))
    except OSError:
        return InMemoryHistory()


def prompt_keys() -> KeyBindings:
    """Enter sends; Alt+Enter (Esc then Enter) inserts a newline."""
    keys = KeyBindings()

    @keys.add("enter")
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys


def answered_part(messages: list[Message], start: int) -> list[Message]:
    """The conversation with an interrupted turn (from index `start`, its user message) cut back to what was
    answered: up to its last tool round whose every call has a result; nothing of it when no round did."""
    turn = messages[start:]
    keep = 0
    index = 1
    while index < len(turn):
        message = turn[index]
        if message.get("role") != "assistant":
            index += 1  # e.g. the "answer now" prompt of a spent step budget
            continue
        calls = message.get("tool_calls") or []
        if not calls:
            keep = index + 1
            index += 1
            continue
        end = index + 1
        while end < len(turn) and turn[end].get("role") == "tool":
            end += 1
        answered = {m.get("tool_call_id") for m in turn[index + 1 : end]}
        if not {call.get("id") for call in calls} <= answered:
            break
        keep = index = end
    return messages[:start] + turn[:keep]


class Repl:
    def __init__(self, runtime: Runtime, renderer: ChatRenderer, console: Console) -> None:
        self.runtime = runtime
        self.renderer = renderer
        self.console = console
        self.messages: list[Message] = []
        self.typeahead = ""
        self.plan_next = False  # `/plan` alone: the next message is planned
        self.approval = ApprovalPrompt()
        runtime.approve = self.approval  # tools ask through it (in `ask` mode) for risky actions
        self.clear_conversation()
        home = Path(os.environ.get("HOME") or Path.home())
        keys = prompt_keys()

        @keys.add("escape", filter=Condition(lambda: self.plan_next and not get_app().current_buffer.text))
        def _drop_plan(event: KeyPressEvent) -> None:
            self.plan_next = False
            event.app.invalidate()

        self.session: PromptSession[str] = PromptSession(
            history=history_file(home),
            multiline=True,
            key_bindings=keys,
            completer=SlashCompleter(),
            complete_while_typing=True,
            bottom_toolbar=self._toolbar,
            prompt_continuation="  ",
        )

    # ---- used by the slash commands ----

    @property
    def model(self) -> str:
        return self.runtime.llm.model

    def switch_model(self, name: str) -> None:
        self.runtime.llm.model = name
        self.runtime.settings = self.runtime.settings.model_copy(update={"model": name})

    def clear_conversation(self) -> None:
        self.messages = [{"role": "system", "content": self.runtime.system_prompt(None)}]

    def _pause_for(self, keys: CancelKeys) -> Callable[[], None]:
        def pause() -> None:
            self.renderer.flush()  # the streamed text so far goes on screen before the question
            keys.pause()

        return pause

    def remember_plan(self, plan: Plan, summary: str | None) -> None:
        """A finished plan joins the conversation, so chat turns after it know what was done."""
        self.messages += [
            {"role": "user", "content": f"/plan {plan.goal}"},
            {"role": "assistant", "content": summary or plan.summary or "The plan completed."},
        ]

    async def compact(self) -> None:
        from paicli.agent.compress import estimate_tokens

        before = estimate_tokens(self.messages)
        try:
            self.messages = await self.runtime.compressor().compact(self.messages)
        except PaicliError as err:
            self.error(one_line(str(err), limit=1000))
            return
        self.say(f"conversation compacted: about {before:,} → {estimate_tokens(self.messages):,} tokens", "dim")

    def say(self, text: str, style: str = "") -> None:
        self.renderer.line(text, style)

    def error(self, text: str) -> None:
        self.renderer.line(text, "red")

    # ---- the loop ----

    async def run(self) -> int:
        self.say(
            f"paicli {__version__} · {self.model} · {self.runtime.workspace}\n"
            "/help for commands · ESC cancels a running turn · Ctrl-D exits",
            "dim",
        )
        while True:
            try:
                text = await self.session.prompt_async(self._prompt, default=self.typeahead)
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt: the line is cleared
            except EOFError:
                return EXIT_OK
            finally:
                self.typeahead = ""
            if await self.handle(text) is Outcome.EXIT:
                return EXIT_OK

    async def handle(self, text: str) -> Outcome:
        if not text.strip():
            return Outcome.CONTINUE
        if self.plan_next and not text.lstrip().startswith("/"):
            self.plan_next = False
            from paicli.ui.plan_command import run_plan

            await run_plan(self, goal=text.strip())
            return Outcome.CONTINUE
        if text.lstrip().startswith("/"):
            name, arg = split_command(text)
            command = find_command(name)
            if command is None:
                self.error(f"unknown command {name} — /help lists the commands")
                return Outcome.CONTINUE
            return await command.run(self, arg)
        await self.run_turn(text)
        return Outcome.CONTINUE

    async def run_turn(self, text: str) -> None:
        """One ReAct turn on the conversation; ESC or Ctrl-C cancels it, a model error ends it."""
        start = len(self.messages)
        pending = [*self.messages, {"role": "user", "content": text}]
        turn = asyncio.create_task(self.runtime.react(self.renderer).run(pending))
        self.renderer.begin_wait()
        keys = CancelKeys(turn.cancel)
        with keys, self.approval.attached(pause=self._pause_for(keys), resume=keys.resume, on_cancel=turn.cancel):
            try:
                await asyncio.wait({turn})
            finally:
                if not turn.done():  # the REPL itself is cancelled (SIGTERM): stop the turn first
                    turn.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await turn
        self.typeahead = keys.typeahead
        error = None if turn.cancelled() else turn.exception()
        if turn.cancelled() or error is not None:
            self.renderer.flush()
            self.messages = answered_part(pending, start)
            if error is None:
                self.say("cancelled", "dim")
            elif isinstance(error, PaicliError):
                self.error(one_line(str(error), limit=1000))  # model unreachable, budget spent, ...: the REPL goes on
            else:
                from rich.traceback import Traceback  # only for bugs: not worth its import time at start

                self.console.print(Traceback.from_exception(type(error), error, error.__traceback__))
                self.error(f"internal error: {type(error).__name__}: {error}")
        else:
            result = turn.result()
            if not self.renderer.streamed and result.content:
                self.renderer.emit(TextDelta(task_id=None, text=result.content))
            self.messages = result.messages
        self.renderer.end_turn()

    def _prompt(self) -> FormattedText:
        if self.plan_next:
            return FormattedText([("bold ansimagenta", "plan" + PROMPT)])
        return FormattedText([("bold ansicyan", PROMPT)])

    def _toolbar(self) -> FormattedText:
        usage = self.renderer.session_usage
        return FormattedText(
            [("", f" {self.model} · ↑ {usage.prompt_tokens:,} ↓ {usage.completion_tokens:,} tokens · /help")]
        )
