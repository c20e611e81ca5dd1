"""The interactive REPL: a prompt_toolkit prompt, slash commands, and chat turns that ESC cancels.

One conversation per session: the system prompt first, then each turn's messages. A turn is driven by
paicli.app (as a task that ESC cancels, see ui/watch.py); a cancelled or failed turn keeps only its
answered part, so the conversation sent next is always consistent (every tool call has its result).
The REPL is the `CommandContext` of the slash commands (ui/slash.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.completion import ThreadedCompleter, merge_completers
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyPressEvent, merge_key_bindings
from rich.console import Console, RenderableType

from paicli import __version__
from paicli.app.checkpoints.service import Checkpoints, attach_checkpoints
from paicli.app.driver import run_turn, until_done
from paicli.app.plan_inputs import PlanRequest
from paicli.app.servers import start_servers_after_this_step
from paicli.config import Settings, user_home
from paicli.errors import EXIT_CANCELLED, EXIT_OK, PaicliError
from paicli.events import FileChange, TextDelta
from paicli.llm.price import Price
from paicli.llm.types import Message, Usage
from paicli.plan.model import PlanStatus
from paicli.policy.approval import ApprovalPolicy
from paicli.runtime import Runtime, build_runtime, secret_values
from paicli.sandbox import SandboxChoice
from paicli.sanitize import one_line
from paicli.tools.commands import dangerous_reason
from paicli.ui.approval import ApprovalPrompt
from paicli.ui.commands import COMMANDS
from paicli.ui.history import history_file
from paicli.ui.mention_complete import MentionCompleter
from paicli.ui.notify import Notifier
from paicli.ui.prompt_line import ESCAPE_WAIT, ContextMeter, ModeSwitch, prompt_keys, prompt_text, toolbar_text
from paicli.ui.render import ChatRenderer
from paicli.ui.shell_escape import shell_command
from paicli.ui.slash import Outcome, SlashCompleter, find_command, split_command
from paicli.ui.watch import cancel_keys

if TYPE_CHECKING:
    from paicli.mcp.manager import McpManager

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
    runtime = build_runtime(settings, renderer, announce=False)  # the banner says whether commands are contained
    checkpoints = attach_checkpoints(runtime, renderer)
    try:
        return await Repl(runtime, renderer, console, checkpoints=checkpoints).run()
    except asyncio.CancelledError:
        return EXIT_CANCELLED
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        await runtime.aclose()
        if checkpoints is not None:
            checkpoints.close()


class Repl:
    def __init__(
        self, runtime: Runtime, renderer: ChatRenderer, console: Console, *, checkpoints: Checkpoints | None = None
    ) -> None:
        self.runtime = runtime
        self.renderer = renderer
        self.console = console
        self._checkpoints = checkpoints
        self._notes: list[str] = []  # told to the model with the next message
        self.messages: list[Message] = []
        self.typeahead = ""
        self.plan_next = False  # `/plan` alone: the next message is planned
        self.approval = ApprovalPrompt()
        runtime.approve = self.approval  # tools ask through it (in `ask` mode) for risky actions
        self.clear_conversation()
        home = user_home()
        self.modes = ModeSwitch(runtime.policy)  # Shift+Tab; the toolbar shows the mode
        self.context_meter = ContextMeter(runtime.settings.context_tokens)
        keys = prompt_keys()

        @keys.add("escape", filter=Condition(lambda: self.plan_next and not get_app().current_buffer.text))
        def _drop_plan(event: KeyPressEvent) -> None:
            self.plan_next = False
            event.app.invalidate()

        mentions = ThreadedCompleter(MentionCompleter(runtime.workspace))
        self.session: PromptSession[str] = PromptSession(
            history=history_file(home, runtime.workspace),
            multiline=True,
            key_bindings=merge_key_bindings([keys, self.modes.keys()]),
            completer=merge_completers([SlashCompleter(COMMANDS), mentions]),
            complete_while_typing=True,
            bottom_toolbar=self._toolbar,
            prompt_continuation="  ",
        )
        self.session.app.timeoutlen = self.session.app.ttimeoutlen = ESCAPE_WAIT  # ESC acts at once
        self.session.default_buffer.on_text_changed += lambda _: self.modes.keep()

    # ---- the CommandContext of the slash commands ----

    @property
    def workspace(self) -> Path:
        return self.runtime.workspace

    @property
    def home(self) -> Path:
        return self.runtime.home

    @property
    def policy(self) -> ApprovalPolicy | None:
        return self.runtime.policy

    @property
    def sandbox(self) -> SandboxChoice:
        return self.runtime.sandbox

    @property
    def model(self) -> str:
        return self.runtime.llm.model

    @property
    def last_thinking(self) -> str:
        return self.renderer.thinking.last

    @property
    def session_usage(self) -> Usage:
        return self.renderer.session_usage

    @property
    def prices(self) -> Mapping[str, Price]:
        return self.runtime.settings.prices

    @property
    def checkpoints(self) -> Checkpoints | None:
        return self._checkpoints

    async def page(self, renderable: RenderableType) -> None:
        from paicli.ui.changes_view import page

        await page(self.console, renderable)

    async def confirm(self, question: str) -> bool:
        asking: PromptSession[str] = PromptSession()
        try:
            answer = await asking.prompt_async(FormattedText([("ansiyellow", question)]))
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")

    def note_for_model(self, text: str) -> None:
        self._notes.append(text)

    def _changed(self, changes: list[FileChange] | None) -> None:
        if changes:
            from paicli.ui.changes_view import changed_text

            self.console.print(changed_text(changes), soft_wrap=True)

    @property
    def mcp(self) -> McpManager | None:
        return self.runtime.mcp

    async def list_models(self) -> list[str]:
        return await self.runtime.llm.list_models()

    def switch_model(self, name: str) -> None:
        self.runtime.llm.model = name
        self.runtime.settings = self.runtime.settings.model_copy(update={"model": name})

    def clear_conversation(self) -> None:
        self.messages = [{"role": "system", "content": self.runtime.system_prompt(None)}]

    def plan_next_message(self) -> None:
        self.plan_next = True

    async def run_plan(self, request: PlanRequest) -> None:
        """Runs a plan on the screen; a completed one joins the conversation, so later turns know of it."""
        from paicli.ui.plan_runner import PlanScreen, plan_on_screen  # plan mode loads on first use

        if request.goal is not None and request.plan is None:
            from paicli.ui.mentions import MentionError, attach, attached_text, attachment_note

            try:
                attachments = await attach(request.goal, self.runtime.tool_context())
            except MentionError as err:
                self.error(f"{one_line(str(err), limit=1000)} — the plan was not started")
                return
            for attachment in attachments:
                self.say(attachment_note(attachment) + " · for the planner", "dim")
            request = dataclasses.replace(request, attached=attached_text(attachments))
        for notice in request.notices:
            self.say(notice, "yellow")
        notify = self._notifier()
        screen = PlanScreen(self.runtime, self.console, self.approval, reviewing=notify.reviewing)
        outcome = await plan_on_screen(self.runtime, screen, request, checkpoints=self._checkpoints)
        if outcome.status is not PlanStatus.CANCELLED:  # the user who cancelled it is looking
            notify(f"plan {outcome.status.value.lower()}")
        self.renderer.session_usage = self.renderer.session_usage + outcome.usage
        self._changed(outcome.changes)
        if outcome.status is PlanStatus.CANCELLED:
            saved = outcome.saved_id
            self.say(f"plan cancelled · /plan resume {saved} continues it" if saved else "plan cancelled", "dim")
        elif outcome.status is PlanStatus.FAILED:
            self.error(one_line(outcome.message() or "", limit=1000))
        elif outcome.plan is not None:
            plan = outcome.plan
            self.messages += [
                {"role": "user", "content": f"/plan {plan.goal}"},
                {"role": "assistant", "content": outcome.summary or plan.summary or "The plan completed."},
            ]

    def _notifier(self) -> Notifier:
        def write(text: str) -> None:
            self.console.file.write(text)
            self.console.file.flush()

        settings = self.runtime.settings
        return Notifier(write, enabled=settings.notify, after=settings.notify_after)

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

    def show(self, renderable: RenderableType) -> None:
        self.console.print(renderable)

    # ---- the loop ----

    async def run(self) -> int:
        self.say(
            f"paicli {__version__} · {self.model} · {self.runtime.workspace}\n"
            "/help for commands · ESC cancels a running turn · Ctrl-D exits",
            "dim",
        )
        sandbox = self.runtime.sandbox
        self.say(sandbox.describe(), "dim" if sandbox.sandbox is not None or sandbox.mode == "off" else "yellow")
        while True:
            try:
                # The MCP servers start once the first prompt is on screen: their start never delays it.
                text = await self.session.prompt_async(
                    self._prompt, default=self.typeahead, pre_run=self._start_servers
                )
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
        if (line := shell_command(text)) is not None:
            await self.run_shell(line)
            return Outcome.CONTINUE
        if self.plan_next and not text.lstrip().startswith("/"):
            self.plan_next = False
            await self.run_plan(PlanRequest(text.strip()))
            return Outcome.CONTINUE
        if text.lstrip().startswith("/"):
            name, arg = split_command(text)
            command = find_command(name, COMMANDS)
            if command is None:
                self.error(f"unknown command {name} — /help lists the commands")
                return Outcome.CONTINUE
            return await command.run(self, arg)
        if (sent := await self.with_mentions(text)) is not None:
            await self.run_turn(sent)
        return Outcome.CONTINUE

    async def with_mentions(self, text: str) -> str | None:
        """`text` with what its `@path` mentions attach; None (after one error line) when one is refused."""
        from paicli.ui.mentions import MentionError, attachment_note, expand_mentions

        try:
            sent, attachments = await expand_mentions(text, self.runtime.tool_context())
        except MentionError as err:
            self.error(f"{one_line(str(err), limit=1000)} — the message was not sent")
            self.typeahead = text  # nothing is lost: the message waits in the prompt to be fixed
            return None
        for attachment in attachments:
            self.say(attachment_note(attachment), "dim")
        return sent

    async def run_shell(self, command: str) -> None:
        """`!command`: runs it as the user (no model); ESC stops it; it joins the conversation."""
        from paicli.ui.shell_escape import run_shell

        ctx = self.runtime.tool_context()
        if reason := dangerous_reason(command, workspace=ctx.workspace):
            self.error(f"refused: {one_line(reason, limit=1000)}")
            return
        job = await until_done(run_shell(command, ctx, lambda line: self.say(line)), self._watch)
        ran = job.result()
        self.say(ran.status, "dim")
        self.messages.append(ran.message())

    async def run_turn(self, text: str) -> None:
        """One ReAct turn on the conversation; ESC or Ctrl-C cancels it, a model error ends it."""
        if self._notes:
            text = "\n".join(self._notes) + "\n\n" + text
            self._notes.clear()
        self.renderer.begin_wait()
        try:
            turn = await run_turn(
                self.runtime, self.renderer, [*self.messages, {"role": "user", "content": text}],
                watch=self._watch, checkpoints=self._checkpoints,
            )  # fmt: skip
        except Exception as error:  # a bug: shown in full, and the REPL goes on
            from rich.traceback import Traceback  # only for bugs: not worth its import time at start

            self.renderer.flush()
            self.console.print(Traceback.from_exception(type(error), error, error.__traceback__))
            self.error(f"internal error: {type(error).__name__}: {error}")
            self.renderer.end_turn()
            return
        self.messages = turn.messages
        if turn.result is None:
            self.renderer.flush()
            if turn.error is None:
                self.say("cancelled", "dim")
            else:
                self.error(one_line(str(turn.error), limit=1000))  # model unreachable, budget spent, ...
        elif not self.renderer.streamed and turn.result.content:
            self.renderer.emit(TextDelta(task_id=None, text=turn.result.content))
        self.renderer.end_turn()
        self._changed(turn.changes)

    @contextlib.contextmanager
    def _watch(self, cancel: Callable[[], None]) -> Iterator[None]:
        # Before a question, the streamed text so far goes on screen.
        with cancel_keys(cancel, self.approval, before_question=[self.renderer.flush]) as keys:
            try:
                yield
            finally:
                self.typeahead = keys.typeahead

    def _start_servers(self) -> None:
        start_servers_after_this_step(self.runtime)
        if self._checkpoints is not None:
            self._checkpoints.warm_up()  # while the user types the first message

    def _prompt(self) -> FormattedText:
        return prompt_text(planning=self.plan_next)

    def _toolbar(self) -> FormattedText:
        return toolbar_text(
            self.model, self.renderer.session_usage, self.runtime.mcp, modes=self.modes, sandbox=self.sandbox,
            context=self.context_meter.percent(self.messages),
        )  # fmt: skip
