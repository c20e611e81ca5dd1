"""Asking the user: the command-approval prompt, the repository-trust prompt, `/approval` and `/audit`.

Wiring in the REPL (paicli/ui/repl.py):

    prompt = ApprovalPrompt(pause=keys_and_view_pause, resume=keys_and_view_resume, on_cancel=turn.cancel)
    runtime.approve = prompt          # every ToolContext made afterwards carries it; mode `ask` by default
    # pause/resume/on_cancel are plain attributes: point them at the current live view / turn when it changes

`pause` must stop everything that draws on or reads the terminal while the question is open: the live
plan view (`LivePlanView.pause`) and the ESC watcher (`CancelKeys`, which otherwise eats the keys).
Slash commands: `/approval [ask|auto|yolo]` → `approval_command(runtime.policy, arg)`, `/audit [N]` →
`audit_command(audit_folder(runtime.home), arg, log=runtime.policy.audit)`; both return text to print.
Trust at start-up (paicli/cli.py, REPL only, before the event loop runs):
`load_settings(..., confirm_trust=confirm_trust if stdin is a terminal else None)`.

Everything shown comes from the model or a repository and goes through `paicli.common.sanitize.terminal_safe`:
control and format characters (escape sequences, bidi overrides, zero-width characters) are made visible
as `\\x1b`, `\\u202e`, ... rather than interpreted or silently dropped, so what the user approves is
what they read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, FormattedText, fragment_list_to_text
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.defaults import load_key_bindings
from prompt_toolkit.layout import ConditionalContainer, Container, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import Output

from paicli.common.sanitize import terminal_safe
from paicli.common.shown import rows as shown_rows
from paicli.common.shown import too_long_to_ask
from paicli.common.wrap import width_of, wrap
from paicli.policy.approval import MODES, OUTSIDE, ApprovalPolicy
from paicli.policy.audit import DEFAULT_SHOWN, AuditLog, format_entries, read_entries
from paicli.sandbox import SandboxChoice
from paicli.tools.base import ApprovalDecision, ApprovalRequest
from paicli.trust import TrustRequest
from paicli.ui.prompt.keys import CHORD_WAIT, ESCAPE_WAIT
from paicli.ui.prompt.question_view import Pager, question

__all__ = ["ApprovalPrompt", "approval_command", "audit_command", "confirm_trust", "question"]

REDRAW_EVERY = 0.25  # seconds between redraws of an open question
YES, NO, ALWAYS, CANCEL = "yes", "no", "always", "cancel"
PAGE_FORWARD = (" ", "pagedown", "down", "j", "c-f")  # through a long command (paicli/ui/prompt/question_view.py)
PAGE_BACK = ("b", "pageup", "up", "k", "c-b")
Above = Callable[[int, int], str]  # (columns, rows) → ANSI text drawn above an open question
REASON_LABEL = "  reason for the model (optional, Enter to send): "
CONTAINED_NOTE = (
    "commands that would ask only because they write or run project code run unasked inside it; "
    "rm, git clean, git reset --hard and the like, and reads outside the workspace, still ask"
)
MODE_NOTES = {
    "ask": "risky actions wait for your yes",
    "auto": "risky actions are refused unless an allow rule covers them",
    "yolo": "everything runs unasked except the hard denylist, deny rules and unreadable commands",
}


class ApprovalPrompt:
    """The REPL's Approver: y yes · n no (then an optional reason for the model) · a always · Esc cancel.

    One question at a time, even when parallel tasks ask together. Esc (or Ctrl-C) refuses and calls
    `on_cancel`, so the user can stop the turn from the prompt; Ctrl-D refuses. Other keys do nothing.
    """

    def __init__(
        self,
        *,
        pause: Callable[[], None] | None = None,
        resume: Callable[[], None] | None = None,
        on_cancel: Callable[[], None] | None = None,
        input: Input | None = None,
        output: Output | None = None,
        queued: Callable[[], int] = lambda: 0,
    ) -> None:
        self.queued = queued  # questions waiting before they reach this prompt (the policy asks one at a time)
        self.pause = pause
        self.resume = resume
        self.on_cancel = on_cancel
        self._input = input
        self._output = output
        self._one_at_a_time = asyncio.Lock()
        self.above: Above | None = None  # what is drawn above the question, kept up to date (a plan's live view)

    @contextlib.contextmanager
    def attached(
        self,
        *,
        pause: Callable[[], None],
        resume: Callable[[], None],
        on_cancel: Callable[[], None],
        above: Above | None = None,
    ) -> Iterator[None]:
        """While a turn or plan runs, questions pause what it draws and reads (and draw `above` over
        themselves instead, redrawn while they wait); ESC at a question cancels it."""
        self.pause, self.resume, self.on_cancel, self.above = pause, resume, on_cancel, above
        try:
            yield
        finally:
            self.pause = self.resume = self.on_cancel = self.above = None

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        async with self._one_at_a_time:
            if self.pause is not None:
                self.pause()
            try:
                return await self._ask(request)
            finally:
                if self.resume is not None:
                    self.resume()

    @property
    def waiting(self) -> int:
        """Questions queued behind the one on screen."""
        return self.queued()

    async def _ask(self, request: ApprovalRequest) -> ApprovalDecision:
        if too_long := too_long_to_ask(request.summary):  # the policy refuses these first; never shown cut
            return ApprovalDecision(allowed=False, how="policy", reason=f"not asked: {too_long}")
        answer, reason = await self._run(request)
        if answer == YES:
            return ApprovalDecision(allowed=True, how="user")
        if answer == ALWAYS:
            return ApprovalDecision(allowed=True, how="session")
        if answer == CANCEL:
            if self.on_cancel is not None:
                self.on_cancel()
            return ApprovalDecision(allowed=False, how="user", reason="the user cancelled")
        return ApprovalDecision(allowed=False, how="user", reason=" ".join(reason.split())[:500])

    async def _run(self, request: ApprovalRequest) -> tuple[str, str]:
        """One small application: a key chooses; after `n` the same application reads the reason, so
        nothing typed quickly is lost between two prompts."""
        state: dict[str, str] = {}
        pager = Pager()
        reason = Buffer(multiline=False)
        choosing = Condition(lambda: "answer" not in state)
        seen = Condition(lambda: pager.seen_all)
        typing_reason = Condition(lambda: state.get("answer") == NO)
        keys = KeyBindings()

        def choose(answer: str, *, ask_reason: bool = False) -> Callable[[KeyPressEvent], None]:
            def handler(event: KeyPressEvent) -> None:
                state["answer"] = answer
                if ask_reason:
                    event.app.layout.focus(reason)
                else:
                    event.app.exit(result=answer)

            return handler

        for key, answer in (("y", YES), ("Y", YES), ("n", NO), ("N", NO), ("a", ALWAYS), ("A", ALWAYS)):
            only_when = choosing if answer == NO else choosing & seen  # yes once the whole command was shown
            keys.add(key, filter=only_when)(choose(answer, ask_reason=answer == NO))
        keys.add("<any>", filter=choosing)(lambda event: None)  # nothing else answers by accident
        for key in ("y", "Y", "a", "A"):
            keys.add(key, filter=choosing & ~seen)(lambda event: setattr(pager, "hurried", True))
        keys.add("c-d", filter=choosing)(choose(NO))
        for key in ("escape", "c-c"):
            keys.add(key, eager=True, filter=choosing)(choose(CANCEL))
        keys.add("enter", filter=typing_reason)(lambda event: event.app.exit(result=NO))

        def without_reason(event: KeyPressEvent) -> None:
            reason.text = ""
            event.app.exit(result=NO)

        for key in ("escape", "c-c", "c-d"):
            keys.add(key, eager=True, filter=typing_reason)(without_reason)

        above = self.above

        def asked(answer: str | None) -> FormattedText:
            """The question paged to the rows left by the reason line (and the view above, 2 rows at least)."""
            size = get_app().output.get_size()
            free = size.rows - 2 - (2 if above is not None else 0)
            return question(request, answer, self.waiting, columns=size.columns, screen_rows=free, pager=pager)

        def paging(move: Callable[[], None]) -> Callable[[KeyPressEvent], None]:
            def handler(event: KeyPressEvent) -> None:
                asked(None)  # the page as it would be drawn now (keys typed ahead arrive before any drawing)
                move()

            return handler

        for names, move in ((PAGE_FORWARD, pager.forward), (PAGE_BACK, pager.back)):
            for key in names:
                keys.add(key, filter=choosing)(paging(move))
        question_window = Window(
            FormattedTextControl(lambda: asked(state.get("answer")), focusable=True),
            wrap_lines=True,
            dont_extend_height=True,
        )
        reason_window = ConditionalContainer(
            Window(BufferControl(reason), height=1, get_line_prefix=lambda *_: REASON_LABEL),
            filter=typing_reason,
        )
        windows: list[Container] = [question_window, reason_window]
        if above is not None:
            windows.insert(0, above_window(above, lambda: asked(None)))
        app: Application[str] = Application(
            layout=Layout(HSplit(windows), focused_element=question_window),
            key_bindings=merge_key_bindings([load_key_bindings(), keys]),
            input=self._input,
            output=self._output,
            full_screen=False,
            refresh_interval=REDRAW_EVERY,  # the view above and the queue count change while it waits
            erase_when_done=True,  # neither the view above nor one page of a long command is left behind ...
        )
        app.ttimeoutlen, app.timeoutlen = ESCAPE_WAIT, CHORD_WAIT  # ESC answers at once, as at the prompt
        try:
            answer = await app.run_async() or NO
        except (EOFError, KeyboardInterrupt):
            answer = NO
            reason.text = ""
        # ... but the whole question (every row of the command), its answer and the reason given are
        given = [("", REASON_LABEL + terminal_safe(reason.text) + "\n")] if answer == NO and reason.text else []
        record = question(request, answer, columns=app.output.get_size().columns)
        print_formatted_text(FormattedText([*record, *given]), output=app.output, end="")
        return answer, reason.text if answer == NO else ""


def above_window(above: Above, asked: Callable[[], FormattedText]) -> Window:
    """What `above` draws (ANSI-styled text of our own rendering: its untrusted parts are already
    sanitized), in the rows the question leaves free, redrawn each time the application is."""

    def text() -> ANSI:
        size = get_app().output.get_size()
        asked_rows = fragment_list_to_text(asked()).count("\n") + 3
        return ANSI(above(size.columns, max(2, size.rows - asked_rows)).rstrip("\n"))

    return Window(FormattedTextControl(text), wrap_lines=False, dont_extend_height=True)


def confirm_trust(request: TrustRequest, *, input: Input | None = None, output: Output | None = None) -> bool:
    """Ask, before the event loop starts, whether to apply a repository config's sensitive settings. What
    the file sets is printed first, whole (it scrolls, never cut), then the question."""
    session: PromptSession[str] = PromptSession(input=input, output=output)
    print_formatted_text(
        FormattedText([("ansiyellow", "\n".join(trust_lines(request, session.output.get_size().columns)) + "\n")]),
        output=session.output,
    )
    servers = [value for label, value in request.fields if label.startswith("server ") and label.count(" ") == 1]
    count = f" ({len(servers)} MCP server{'s' if len(servers) != 1 else ''} above: read every field)" if servers else ""
    question = (
        "These decide where your API key is sent, what runs unasked, which programs paicli starts, what the "
        "agent is told, what a plan may spend and what /undo can take back. Apply them for this repository "
        f"(remembered until the file changes){count}? [y/N]"
    )
    question = "\n".join(wrap(question, session.output.get_size().columns - 1)) + " "  # at spaces, as it fits
    try:
        answer = session.prompt(FormattedText([("ansiyellow", question)]))
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")


def trust_lines(request: TrustRequest, columns: int = 100) -> list[str]:
    """What a repository file sets, one `what = value` a field, each whole (paicli/common/shown.py; a run of
    blank lines one row saying how many, so a value cannot push the next server off the screen), every line
    at most `columns` wide."""
    lines = shown_rows(f"{request.path} wants to set:", columns)
    for label, value in [*request.values.items(), *request.fields]:
        heads = [f"  {row}" for row in shown_rows(label, max(20, columns - 4))]
        rows = shown_rows(value, max(20, columns - 6), blank_runs=True)
        if len(heads) == 1 and len(rows) == 1 and width_of(f"{heads[0]} = {rows[0]}") <= columns:
            lines.append(f"{heads[0]} = {rows[0]}")
        else:
            lines += [*heads[:-1], heads[-1] + " =", *(f"      {row}" for row in rows)]
    return lines


def approval_command(policy: ApprovalPolicy | None, arg: str, *, sandbox: SandboxChoice | None = None) -> str:
    """`/approval` shows the mode, whether commands are contained, rules and session grants; `/approval
    MODE` switches the mode."""
    if policy is None:
        return "approvals are not available in this session"
    choice = arg.strip().lower()
    if choice and choice not in MODES:
        return "usage: /approval [ask|auto|yolo]"
    if choice:
        policy.mode = choice  # checked against MODES just above
        return f"approval mode: {choice} for this session — {MODE_NOTES[choice]}"
    mode = policy.mode or "ask"
    lines = [f"approval mode: {mode} — {MODE_NOTES[mode]}"]
    if sandbox is not None:
        lines.append(sandbox.describe())
        if sandbox.sandbox is not None:
            lines.append("  " + CONTAINED_NOTE)
    listed = (("allow", policy.rules.allow), ("deny", policy.rules.deny), ("unsandboxed", policy.unsandboxed))
    for label, rules in listed:
        if rules:
            lines.append(f"{label} rules: " + ", ".join(terminal_safe(rule.text) for rule in rules))
    grants = sorted(key.split(":", 1)[1] for key in policy.grants if not key.startswith(OUTSIDE))
    if grants:
        lines.append("always allowed this session: " + ", ".join(terminal_safe(g) for g in grants))
    outside = sorted(key.removeprefix(OUTSIDE) for key in policy.grants if key.startswith(OUTSIDE))
    if outside:
        lines.append("run outside the sandbox this session: " + ", ".join(terminal_safe(g) for g in outside))
    return "\n".join(lines)


def audit_command(folder: Path, arg: str, *, log: AuditLog | None = None) -> str:
    """`/audit [N]`: the latest N (default 20) tool calls with their decisions, oldest first."""
    text = arg.strip()
    if text and not (text.isdigit() and int(text) > 0):
        return "usage: /audit [N] (the latest N entries, default 20)"
    entries = read_entries(folder, int(text) if text else DEFAULT_SHOWN)
    lines = [terminal_safe(line) for line in format_entries(entries)] or [f"no audit entries yet in {folder}"]
    if log is not None and log.last_error:
        lines.append(f"warning: {log.last_error}")
    return "\n".join(lines)
