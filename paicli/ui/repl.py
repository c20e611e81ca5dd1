"""The interactive REPL: a prompt_toolkit prompt, slash commands, and chat turns that ESC cancels.

One conversation per session: the system prompt first, then each turn's messages. A turn is driven by
paicli.app (as a task that ESC cancels, see ui/prompt/watch.py); a cancelled or failed turn keeps only its
answered part, so the conversation sent next is always consistent (every tool call has its result).
The REPL is the `CommandContext` of the slash commands (ui/commands/context.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.completion import ThreadedCompleter, merge_completers
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText, fragment_list_to_text
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyPressEvent, merge_key_bindings
from rich.console import Console, RenderableType

from paicli.app.checkpoints.service import Checkpoints
from paicli.app.conversations import ConversationLog, Restored, restore, session_store
from paicli.app.custom_commands import CustomCommands, load_custom_commands
from paicli.app.driver import READ_ONLY, TurnOutcome, run_turn
from paicli.app.plan_inputs import PlanRequest
from paicli.app.servers import start_servers_after_this_step
from paicli.app.sessions import LoadedSession
from paicli.common.errors import EXIT_OK, PaicliError
from paicli.common.events import FileChange, TextDelta
from paicli.common.sanitize import one_line
from paicli.config import user_home
from paicli.llm.images import text_part
from paicli.llm.types import Message
from paicli.plan.model import PlanStatus
from paicli.runtime import Runtime
from paicli.ui.chat.render import ChatRenderer
from paicli.ui.commands.context import Outcome, SlashCompleter, find_command, split_command
from paicli.ui.commands.custom_command import custom_table
from paicli.ui.commands.expand import add_expand_key
from paicli.ui.commands.repl_views import ReplViews
from paicli.ui.commands.shell_escape import shell_command
from paicli.ui.commands.table import COMMANDS
from paicli.ui.commands.usage_view import PlanUsage
from paicli.ui.prompt.approval_prompt import ApprovalPrompt
from paicli.ui.prompt.history import history_file
from paicli.ui.prompt.interrupt import EXIT_HINT, DoubleInterrupt
from paicli.ui.prompt.mention_complete import MentionCompleter
from paicli.ui.prompt.notify import terminal_notifier
from paicli.ui.prompt.prompt_line import (
    ContextMeter,
    ModeSwitch,
    ask_line,
    prompt_keys,
    prompt_text,
    toolbar_text,
    tune_prompt,
)
from paicli.ui.prompt.watch import cancel_keys


class Repl(ReplViews):
    def __init__(
        self,
        runtime: Runtime,
        renderer: ChatRenderer,
        console: Console,
        *,
        checkpoints: Checkpoints | None = None,
        modes: ModeSwitch | None = None,
        history: History | None = None,  # the first prompt's: one copy of the history in memory
        custom: CustomCommands | None = None,  # the custom slash commands, else loaded here
        interrupts: DoubleInterrupt | None = None,  # the first prompt's: a Ctrl+C there counts
    ) -> None:
        self.runtime = runtime
        self.renderer = renderer
        self.console = console
        self._checkpoints = checkpoints
        self._notes: list[str] = []  # told to the model with the next message
        self.messages: list[Message] = []
        self.typeahead = ""
        self.plan_next = False  # `/plan` alone: the next message is planned
        self.plan_usages: list[PlanUsage] = []  # for /usage
        self.interrupts = interrupts or DoubleInterrupt()  # Ctrl+C twice on an empty line exits
        self.approval = ApprovalPrompt(queued=lambda: runtime.policy.waiting if runtime.policy else 0)
        runtime.approve = self.approval  # tools ask through it (in `ask` mode) for risky actions
        store = session_store(runtime.settings, runtime.home, runtime.secrets())
        self.conversations = ConversationLog(store, model=self.model, notify=lambda text: self.say(text, "yellow"))
        self.clear_conversation()
        home = user_home()
        self.commands = [*COMMANDS, *custom_table(custom or load_custom_commands(runtime.workspace, home))]
        self.modes = modes or ModeSwitch(runtime.policy)  # Shift+Tab; the toolbar shows the mode
        self.context_meter = ContextMeter(runtime.settings.context_tokens)
        keys = prompt_keys()

        @keys.add("escape", filter=Condition(lambda: self.plan_next and not get_app().current_buffer.text))
        def _drop_plan(event: KeyPressEvent) -> None:
            self.plan_next = False
            event.app.invalidate()

        add_expand_key(keys, self._hold_line)
        self._held_line = ""  # typed before Ctrl+O: back in the next prompt
        renderer.status_line = lambda: fragment_list_to_text(self.toolbar())  # under a running command
        renderer.rate = runtime.llm.rate_status  # "Rate limited…" instead of "Thinking…" while held at the gate
        mentions = ThreadedCompleter(MentionCompleter(runtime.workspace))
        self.session: PromptSession[str] = PromptSession(
            history=history or history_file(home, runtime.workspace),
            multiline=True,
            key_bindings=merge_key_bindings([keys, self.modes.keys()]),
            completer=merge_completers([SlashCompleter(self.commands), mentions]),
            complete_while_typing=True,
            bottom_toolbar=self.toolbar,
            prompt_continuation="  ",
        )
        tune_prompt(self.session, self.modes)

    # ---- the CommandContext of the slash commands ----

    @property
    def model(self) -> str:
        return self.runtime.llm.model

    async def confirm(self, question: str) -> bool:
        return (await self.ask(question)).strip().lower() in ("y", "yes")

    async def ask(self, question: str) -> str:
        return await ask_line(question)

    async def read_only_turn(self, request: str) -> TurnOutcome:
        from paicli.ui.commands.init_command import WithoutText

        messages = [self.messages[0], {"role": "user", "content": request}]
        self.renderer.begin_wait()
        try:
            return await run_turn(
                self.runtime, WithoutText(self.renderer), messages, watch=self._watch, scope=READ_ONLY
            )
        finally:
            self.renderer.end_turn()

    def resume_conversation(self, session: LoadedSession) -> Restored:
        self.clear_conversation()
        restored = restore(session, self.runtime.settings.context_tokens, self.messages[0]["content"])
        self.messages += restored.messages
        self.conversations.continue_in(session.summary.id, self.messages, self.renderer.session_usage.total)
        return restored

    def note_for_model(self, text: str) -> None:
        self._notes.append(text)

    def _changed(self, changes: list[FileChange] | None) -> None:
        if changes:
            from paicli.ui.chat.changes_view import changed_text

            self.console.print(changed_text(changes))

    def _hold_line(self, text: str) -> None:
        self._held_line = text

    async def list_models(self) -> list[str]:
        return await self.runtime.llm.list_models()

    def switch_model(self, name: str) -> None:
        self.runtime.llm.model = name
        self.runtime.settings = self.runtime.settings.model_copy(update={"model": name})

    def clear_conversation(self) -> None:
        self.messages = [{"role": "system", "content": self.runtime.system_prompt(None)}]
        self.conversations.start_new(self.renderer.session_usage.total)

    def plan_next_message(self) -> None:
        self.plan_next = True

    async def run_plan(self, request: PlanRequest) -> None:
        """Runs a plan on the screen; a completed one joins the conversation, so later turns know of it."""
        from paicli.ui.plan.plan_runner import PlanScreen, plan_on_screen  # plan mode loads on first use

        if request.goal is not None and request.plan is None:
            from paicli.ui.prompt.mentions import MentionError, attach, attached_text, attachment_note

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
        notify = terminal_notifier(
            self.console.file, enabled=self.runtime.settings.notify, after=self.runtime.settings.notify_after
        )
        screen = PlanScreen(self.runtime, self.console, self.approval, reviewing=notify.reviewing)
        self.transcript.begin(f"/plan {request.goal or ''}".strip())
        outcome = await plan_on_screen(
            self.runtime, screen, request, also=self.transcript, checkpoints=self._checkpoints
        )
        if outcome.status is not PlanStatus.CANCELLED:  # the user who cancelled it is looking
            notify(f"plan {outcome.status.value.lower()}")
        self.renderer.session_usage = self.renderer.session_usage + outcome.usage
        goal = request.goal or (outcome.plan.goal if outcome.plan else "")
        self.plan_usages.append(PlanUsage(goal, outcome.usage, outcome.saved_id))
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

    async def run(self, first_line: str | None = None) -> int:
        """The prompt loop, after `first_line`: what was typed at the first prompt, shown with the banner
        while the REPL was being built (paicli/ui/first_prompt.py)."""
        if first_line is not None and await self.handle(first_line) is Outcome.EXIT:
            return self.goodbye()
        while True:
            try:
                # The MCP servers start once the first prompt is on screen: their start never delays it.
                text = await self.session.prompt_async(self._prompt, default=self.typeahead, pre_run=self.start_servers)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: the line is cleared; twice on an empty one exits
                line = self.session.default_buffer.text
                if self.interrupts.exits(line):
                    return self.goodbye()
                if not line.strip():
                    self.say(EXIT_HINT, "dim")
                continue
            except EOFError:
                return self.goodbye()
            finally:
                self.typeahead, self._held_line = self._held_line, ""
            if await self.handle(text) is Outcome.EXIT:
                return self.goodbye()

    def goodbye(self) -> int:
        """Leaving: how to come back to this conversation, when there is one to come back to."""
        if len(self.messages) > 1:
            self.say("paicli -c continues this conversation", "dim")
        return EXIT_OK

    async def handle(self, text: str) -> Outcome:
        try:
            return await self._handle(text)
        finally:  # whatever the input changed of the conversation is saved at once
            self.conversations.save(self.messages, self.renderer.session_usage.total)

    async def _handle(self, text: str) -> Outcome:
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
            command = find_command(name, self.commands)
            if command is None:
                self.error(f"unknown command {name} — /help lists the commands")
                return Outcome.CONTINUE
            return await command.run(self, arg)
        await self.send(text)
        return Outcome.CONTINUE

    async def send(self, text: str, *, allowed_tools: tuple[str, ...] | None = None) -> None:
        if (sent := await self.with_mentions(text)) is not None:
            await self.run_turn(sent, allowed_tools=allowed_tools, typed=text)

    async def with_mentions(self, text: str) -> str | list[dict[str, Any]] | None:
        """`text` with what its `@path` mentions attach (images as image parts when the model takes them);
        None (after one error line) when one is refused."""
        from paicli.ui.prompt.mentions import mentioned

        vision = self.runtime.llm.capabilities.accepts("vision")
        if (sent := await mentioned(text, self.runtime.tool_context(), self.say, vision=vision)) is None:
            self.typeahead = text  # nothing is lost: the message waits in the prompt to be fixed
        return sent

    async def run_shell(self, command: str) -> None:
        """`!command`: runs it as the user (no model); ESC stops it; it joins the conversation."""
        from paicli.ui.commands.shell_escape import shell_escape

        if (message := await shell_escape(command, self.runtime.tool_context(), self.say, self._watch)) is not None:
            self.messages.append(message)

    async def run_turn(
        self, content: str | list[dict[str, Any]], *, allowed_tools: tuple[str, ...] | None = None, typed: str = ""
    ) -> None:
        """One ReAct turn on the conversation; ESC or Ctrl-C cancels it, a model error ends it. `content`:
        the message's text, or its parts (text, images); `typed`: what the user typed, for the transcript."""
        self.transcript.begin(typed or (content if isinstance(content, str) else ""))
        if self._notes:
            notes = "\n".join(self._notes) + "\n\n"
            content = notes + content if isinstance(content, str) else [text_part(notes), *content]
            self._notes.clear()
        self.renderer.begin_wait()
        try:
            turn = await run_turn(
                self.runtime,
                self.renderer,
                [*self.messages, {"role": "user", "content": content}],
                watch=self._watch,
                checkpoints=self._checkpoints,
                allowed_tools=allowed_tools,
            )
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
        with cancel_keys(
            cancel, self.approval, before_question=[self.renderer.pause], after_question=[self.renderer.resume]
        ) as keys:
            try:
                yield
            finally:
                self.typeahead = keys.typeahead

    def start_servers(self) -> None:
        start_servers_after_this_step(self.runtime)
        if self._checkpoints is not None:
            self._checkpoints.warm_up()  # while the user types the first message
        self.runtime.listings.warm(self.runtime.workspace)  # grep_code's first search is then as quick as the next
        self.runtime.warm_map()  # the first plan's map then waits for what is left of the index update

    def _prompt(self) -> FormattedText:
        return prompt_text(planning=self.plan_next)

    def toolbar(self) -> FormattedText:
        return toolbar_text(
            self.model,
            self.renderer.session_usage,
            self.runtime.mcp,
            modes=self.modes,
            sandbox=self.sandbox,
            context=self.context_meter.percent(self.messages),
        )
