"""The last turn or plan as it happened, whole: what `/transcript` pages, and the last tool output that
`/expand` (Ctrl+O at the prompt) pages.

`Transcript` is an EventSink fed alongside the screen (the chat renderer, or a plan's live view): the
tool calls with their complete results and diffs (as the model saw them: capped at the output limit),
the streamed answer of a chat turn, and each plan task's end. `begin` starts a new one. Everything is
untrusted and shown only as sanitized, secret-masked `Text` (a diff in syntax colours).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from rich.console import Group, RenderableType
from rich.text import Text

from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
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
from paicli.common.sanitize import terminal_safe
from paicli.tools.output import mask_secrets
from paicli.ui.chat.changes_view import diff_view
from paicli.ui.chat.preview import result_preview

MAX_TEXT_CHARS = 200_000  # of streamed answer text kept for one transcript


@dataclass
class _Call:
    task_id: str | None
    name: str
    summary: str
    ok: bool | None = None  # None: no result yet
    output: str = ""
    diff: str = ""


class Transcript:
    def __init__(self, secrets: Sequence[str] = ()) -> None:
        self.secrets = [secret for secret in secrets if secret]
        self.title = ""
        self._parts: list[_Call | str | Text] = []  # calls, answer text, other lines
        self._last_result: _Call | None = None

    def begin(self, title: str) -> None:
        """A new turn or plan (`title`: the message or goal); the last tool output stays until a new one."""
        self.title = title
        self._parts = []

    def emit(self, event: AnyEvent) -> None:
        match event:
            case ToolCallEvent():
                summary = event.summary or (event.arguments if isinstance(event.arguments, str) else "")
                self._parts.append(_Call(event.task_id, event.name, summary))
            case ToolResultEvent():
                self._result(event)
            case TextDelta():
                if event.task_id is None:  # parallel tasks' text would interleave
                    self._text(event.text)
            case TaskFinished():
                outcome = event.result or event.error or ""
                line = f"■ {event.task_id} {event.status.value.lower()}: {outcome}"
                self._parts.append(Text(self._safe(line), "bold"))
            case Notice():
                self._parts.append(Text(self._safe(event.message), "dim"))
            case PlanCreated() | PlanTaskStreamed() | PlanApproved() | TaskStarted() | ReplanEvent() | ReviewEvent():
                pass  # the plan views show these
            case PlanFinished() | RunFinished() | ModelUsage() | ReasoningDelta() | CommandOutput() | ApprovalWaited():
                pass  # the answer is in its deltas, a command's output in its result
            case ReplyRestarted():
                if event.task_id is None and self._parts and isinstance(self._parts[-1], str):
                    self._parts.pop()  # that reply's text is void: the new one streams from its beginning
            case _:
                assert_never(event)

    def _result(self, event: ToolResultEvent) -> None:
        call = next(
            (
                p
                for p in reversed(self._parts)
                if isinstance(p, _Call) and p.ok is None and p.name == event.name and p.task_id == event.task_id
            ),
            None,
        )
        if call is None:
            call = _Call(event.task_id, event.name, "")
            self._parts.append(call)
        call.ok, call.output, call.diff = event.ok, event.output, event.diff
        self._last_result = call

    def _text(self, text: str) -> None:
        if self._parts and isinstance(self._parts[-1], str):
            self._parts[-1] = (self._parts[-1] + text)[-MAX_TEXT_CHARS:]
        else:
            self._parts.append(text)

    @property
    def has_output(self) -> bool:
        return self._last_result is not None

    def last_output(self) -> RenderableType | None:
        """The last tool result whole: its call, its complete output, its diff."""
        return None if self._last_result is None else Group(*self._call(self._last_result))

    def renderable(self) -> RenderableType | None:
        if not self._parts and not self.title:
            return None
        shown: list[RenderableType] = []
        if self.title:
            shown.append(Text(self._safe("› " + self.title), "bold"))
        for part in self._parts:
            if isinstance(part, _Call):
                shown += self._call(part)
            elif isinstance(part, str):
                if part.strip():
                    shown.append(Text(self._safe(part.strip("\n"))))
            else:
                shown.append(part)
        return Group(*shown)

    def _call(self, call: _Call) -> list[RenderableType]:
        who = f"[{call.task_id}] " if call.task_id else ""
        line = Text.assemble(("⏺ ", "cyan"), who, (self._safe(call.name), "bold"))
        if call.summary:
            line.append(" " + self._safe(call.summary))
        parts: list[RenderableType] = [line]
        if call.ok is None:
            parts.append(Text("  ⎿ (no result: cancelled or still running)", "dim"))
            return parts
        headline = result_preview(call.name, call.ok, call.output).headline
        parts.append(Text("  ⎿ " + self._safe(headline), "dim" if call.ok else "red"))
        if call.output.strip():
            parts.append(Text(self._safe(call.output.strip("\n"))))
        if call.diff:
            parts.append(diff_view(self._mask(call.diff)))
        return parts

    def _mask(self, text: str) -> str:
        return mask_secrets(text, self.secrets)

    def _safe(self, text: str) -> str:
        return self._mask(terminal_safe(text))
