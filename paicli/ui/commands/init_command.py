"""`/init`: a PAI.md for the repository, drafted by a read-only turn and written only after a yes.

The model explores the repository in one ReAct turn whose tools may only read (the prompt is
prompts/modes/init.md; one turn, not a plan: a plan's planner would have to guess which files hold the
commands before anything was read). Its tool lines show as usual, its answer does not stream: the
answer is the proposed file, shown as a diff against the PAI.md there is (or as a new file) and
written, atomically, only when the user says yes. An existing PAI.md is never replaced without a yes.
"""

from __future__ import annotations

import difflib
import re
from typing import assert_never

from paicli.agent.context import load_prompt
from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
    EventSink,
    ModelUsage,
    Notice,
    PlanApproved,
    PlanCreated,
    PlanFinished,
    PlanTaskStreamed,
    ReasoningDelta,
    ReplanEvent,
    ReplyRestarted,
    ReviewEvent,
    RunFinished,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.sanitize import one_line
from paicli.tools.atomic import atomic_write
from paicli.tools.base import ToolFailure
from paicli.tools.confined import UnsafeFile, read_path
from paicli.ui.commands.context import CommandContext, Outcome

FILE = "PAI.md"
MAX_EXISTING_BYTES = 1 << 20
_FENCE = re.compile(r"\A```[A-Za-z]*\n(?P<body>.*?)\n```\s*\Z", re.DOTALL)


class WithoutText:
    """Passes every event on but the streamed answer text (the answer is shown as a diff instead). Each
    event type is named: a new one is passed on, or held back like the answer, by a decision."""

    def __init__(self, inner: EventSink) -> None:
        self.inner = inner

    def emit(self, event: AnyEvent) -> None:
        match event:
            case TextDelta():
                pass  # the proposed file, shown as a diff once it is whole
            case ToolCallEvent() | ToolResultEvent() | CommandOutput() | ReasoningDelta() | ReplyRestarted():
                self.inner.emit(event)
            case ModelUsage() | Notice() | RunFinished() | ApprovalWaited():
                self.inner.emit(event)
            case PlanCreated() | PlanApproved() | TaskStarted() | TaskFinished() | ReplanEvent() | ReviewEvent():
                self.inner.emit(event)
            case PlanFinished() | PlanTaskStreamed():
                self.inner.emit(event)
            case _:
                assert_never(event)


async def init(ctx: CommandContext, arg: str) -> Outcome:
    target = ctx.workspace / FILE
    if target.is_symlink():
        ctx.error(f"{FILE} is a symlink: /init writes only a plain file in the workspace")
        return Outcome.CONTINUE
    try:
        before = read_path(target, limit=MAX_EXISTING_BYTES).decode("utf-8", "replace") if target.exists() else None
    except (OSError, UnsafeFile) as err:
        ctx.error(f"{FILE} cannot be read: {one_line(str(err), limit=300)}")
        return Outcome.CONTINUE
    doing = "revise" if before is not None else "write"
    ctx.say(f"reading the repository to {doing} {FILE} (its tools may only read; ESC stops)", "dim")
    turn = await ctx.read_only_turn(load_prompt("modes/init.md", ctx.workspace, ctx.home))
    if turn.result is None:
        ctx.error(f"{FILE} not written: " + (one_line(str(turn.error), limit=1000) if turn.error else "cancelled"))
        return Outcome.CONTINUE
    proposed = drafted_text(turn.result.content)
    if not proposed.strip():
        ctx.error(f"{FILE} not written: the model's answer was empty")
        return Outcome.CONTINUE
    if before is not None and proposed == before:
        ctx.say(f"{FILE} is already what the model would write: nothing to change", "dim")
        return Outcome.CONTINUE
    from paicli.ui.chat.changes_view import diff_view

    ctx.show(diff_view(file_diff(before, proposed)))
    question = f"Replace the existing {FILE} with this? [y/N] " if before is not None else f"Write {FILE}? [y/N] "
    if not await ctx.confirm(question):
        ctx.say(f"{FILE} not written", "dim")
        return Outcome.CONTINUE
    try:
        atomic_write(target, proposed, root=ctx.workspace)
    except (OSError, ToolFailure) as err:
        ctx.error(f"{FILE} not written: {one_line(str(err), limit=300)}")
        return Outcome.CONTINUE
    ctx.say(f"{FILE} written · it joins the prompts of new conversations (/new) and of plans", "dim")
    return Outcome.CONTINUE


def drafted_text(answer: str) -> str:
    """The answer as a file: a fence around the whole of it removed, one newline at the end."""
    text = answer.strip()
    if match := _FENCE.match(text):
        text = match.group("body").strip()
    return text + "\n" if text else ""


def file_diff(before: str | None, after: str) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{FILE}" if before is not None else "/dev/null",
        tofile=f"b/{FILE}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
