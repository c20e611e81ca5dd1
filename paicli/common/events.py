"""Typed events emitted by the core. The REPL renders them; headless mode writes them as JSON lines.

The first eleven are the contract other programs read (docs/contract.md, "Events"); the rest are additions that the REPL
uses and that `--json` also writes, except `text_delta`, `reasoning_delta`, `command_output` and
`reply_restarted`, too chatty for a JSON stream.

Statuses and types are the enums of `paicli.common.kinds` (written as their names). `AnyEvent` is the union of
every event, discriminated by its `event` field: `parse_event` reads a JSON line back into its class, so
consumers switch on types, never on dictionaries. A sink takes `AnyEvent`; one that renders events
dispatches with `match event:`, a case for each event type (those it ignores grouped in one case), ending in
`case _: assert_never(event)`, so that mypy names every sink a new event type is missing from
(tests/test_events.py keeps them so).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, field_validator, model_serializer

from paicli.common.kinds import FINAL_PLAN_STATUSES, FINISHED_TASK_STATUSES, PlanStatus, TaskStatus, TaskType
from paicli.common.values import Estimate, Retries, Usage


class Event(BaseModel):
    event: str
    ts: float = Field(default_factory=time.time)


class ActionView(BaseModel):
    tool: str
    args: dict[str, Any]


class TaskView(BaseModel):
    id: str
    description: str
    type: TaskType
    dependencies: list[str]
    status: TaskStatus
    files: list[str] | None = None  # the plan contract: paths it may change (None: not declared)
    action: ActionView | None = None  # one exact tool call run without a model request

    @model_serializer(mode="wrap")
    def _without_undeclared(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A task without `files` or `action` is written as before the contract existed."""
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if key not in ("files", "action") or value is not None}


class PlanView(BaseModel):
    summary: str
    tasks: list[TaskView]


class PlanCreated(Event):
    event: Literal["plan_created"] = "plan_created"
    round: int
    plan: PlanView
    estimate: Estimate | None = None  # addition: what running its PENDING tasks is expected to cost


class PlanTaskStreamed(Event):
    """A task of the plan as the planner writes it (streamed planning): its object in the reply is complete.
    A preview: the plan is what `plan_created` carries, once the whole reply is in and validated. A reply
    asked again (a broken stream, a re-ask) starts a new `attempt`, whose tasks replace the earlier ones."""

    event: Literal["plan_task_streamed"] = "plan_task_streamed"
    round: int
    task: TaskView
    attempt: int = 1  # addition: which reply of this round's planning the task comes from
    tokens: int = 0  # addition: the reply's length so far in tokens (estimated as the client estimates)
    elapsed: float = 0.0  # addition: seconds since the planner's request was sent


class PlanApproved(Event):
    event: Literal["plan_approved"] = "plan_approved"
    round: int
    estimate: Estimate | None = None  # addition: what the approved version of this round is expected to cost


class TaskStarted(Event):
    event: Literal["task_started"] = "task_started"
    task_id: str


class ToolCallEvent(Event):
    event: Literal["tool_call"] = "tool_call"
    task_id: str | None
    name: str
    arguments: dict[str, Any] | str  # a string when the model sent arguments that are not a JSON object
    summary: str = ""  # addition: what the call does in a few words (`src/app.py`, `pytest -q`), from the tool


class ToolResultEvent(Event):
    event: Literal["tool_result"] = "tool_result"
    task_id: str | None
    name: str
    ok: bool
    output: str
    diff: str = ""  # addition: a unified diff of what a write changed (for the display); left out when empty

    @model_serializer(mode="wrap")
    def _without_empty_diff(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("diff"):
            data.pop("diff", None)
        return data


class TaskFinished(Event):
    event: Literal["task_finished"] = "task_finished"
    task_id: str
    status: TaskStatus  # COMPLETED, FAILED or SKIPPED
    result: str | None = None
    error: str | None = None

    @field_validator("status")
    @classmethod
    def _finished(cls, status: TaskStatus) -> TaskStatus:
        if status not in FINISHED_TASK_STATUSES:
            raise ValueError(f"a task that finished is COMPLETED, FAILED or SKIPPED, not {status}")
        return status


class ReplanEvent(Event):
    event: Literal["replan"] = "replan"
    round: int
    reason: str


class ReviewEvent(Event):
    event: Literal["review"] = "review"
    round: int
    score: float
    reflection: str


class FileChange(BaseModel):
    """A file a turn or a plan changed. `added`/`removed` are None for a binary file; `task_id` is the one
    task that changed it, None in chat or when several tasks may have (all of them in `task_ids`).
    `attributed` is false (and only then written) when paicli cannot tell whether the turn or plan made the
    change: its command could have, and someone else may have too (another paicli process running a
    command, or a write elsewhere in the workspace meanwhile; without the sandbox, a path the task did not
    declare). Undo then asks, or wants --force."""

    path: str
    status: Literal["created", "modified", "deleted"]
    added: int | None
    removed: int | None
    task_id: str | None = None
    task_ids: list[str] = Field(default_factory=list)
    attributed: bool = True  # addition (issue 29): false when the change may be someone else's

    @model_serializer(mode="wrap")
    def _attributed_only_when_not(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`"attributed": false` is written on the changes it is about; the others read as before."""
        data: dict[str, Any] = handler(self)
        if data.get("attributed") is True:
            del data["attributed"]
        return data


class _WithChanges(Event):
    """A subclass's `changes` is left out of the JSON when checkpoints are off (None), [] when nothing
    changed."""

    @model_serializer(mode="wrap")
    def _drop_unknown_changes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("changes", []) is None:
            del data["changes"]
        return data


class PlanFinished(_WithChanges):
    event: Literal["plan_finished"] = "plan_finished"
    status: PlanStatus  # COMPLETED, FAILED or CANCELLED
    summary: str | None = None
    usage: Usage
    estimate: Estimate | None = None  # addition: what the approved rounds were expected to cost
    requests: int | None = None  # addition: model requests made after the plan was approved
    retries: Retries | None = None  # addition: the plan's model requests retried, by kind (issue 18)
    changes: list[FileChange] | None = None

    @field_validator("status")
    @classmethod
    def _final(cls, status: PlanStatus) -> PlanStatus:
        if status not in FINAL_PLAN_STATUSES:
            raise ValueError(f"a plan that finished is COMPLETED, FAILED or CANCELLED, not {status}")
        return status


class RunFinished(_WithChanges):
    event: Literal["run_finished"] = "run_finished"
    content: str
    usage: Usage
    changes: list[FileChange] | None = None


# ---- additions -----------------------------------------------------------------------------------


class TextDelta(Event):
    """A piece of streamed assistant text (not written by `--json`)."""

    event: Literal["text_delta"] = "text_delta"
    task_id: str | None
    text: str


class ReasoningDelta(Event):
    """A piece of a reasoning model's thinking as it streams (not written by `--json`; never a result)."""

    event: Literal["reasoning_delta"] = "reasoning_delta"
    task_id: str | None
    text: str


class CommandOutput(Event):
    """A piece of a running command's output as it comes (not written by `--json`; the result carries it all)."""

    event: Literal["command_output"] = "command_output"
    task_id: str | None
    text: str


class ReplyRestarted(Event):
    """The model's reply broke off and is asked again: the text and thinking streamed for it so far are
    void, the new reply streams from its beginning (not written by `--json`, like the deltas)."""

    event: Literal["reply_restarted"] = "reply_restarted"
    task_id: str | None


class ApprovalWaited(Event):
    """A question to the user about a call (approve it, run it outside the sandbox) was answered after
    `seconds`: the time of a task excludes it (its timer does not run while paicli waits for the user)."""

    event: Literal["approval_waited"] = "approval_waited"
    task_id: str | None
    seconds: float


class ModelUsage(Event):
    """Usage of one model request, as soon as it is known."""

    event: Literal["usage"] = "usage"
    task_id: str | None
    usage: Usage


class Notice(Event):
    """Something the user should know that is not an error of the current step (a retry, a fallback)."""

    event: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str


AnyEvent = Annotated[
    PlanCreated
    | PlanTaskStreamed
    | PlanApproved
    | TaskStarted
    | ToolCallEvent
    | ToolResultEvent
    | TaskFinished
    | ReplanEvent
    | ReviewEvent
    | PlanFinished
    | RunFinished
    | TextDelta
    | ReasoningDelta
    | CommandOutput
    | ReplyRestarted
    | ApprovalWaited
    | ModelUsage
    | Notice,
    Field(discriminator="event"),
]
_ANY_EVENT: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)


def parse_event(line: str | bytes) -> AnyEvent:
    """One JSON line of `--json` output back into its event class (pydantic.ValidationError if it is none)."""
    return _ANY_EVENT.validate_json(line)


class EventSink(Protocol):
    def emit(self, event: AnyEvent) -> None: ...


class NullSink:
    def emit(self, event: AnyEvent) -> None:
        pass


class FanOutSink:
    """Every event to each of several sinks, in order (e.g. the live view and a JSON-lines writer)."""

    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = sinks

    def emit(self, event: AnyEvent) -> None:
        for sink in self.sinks:
            sink.emit(event)


class ListSink:
    """Collects events; used by tests and by callers that render afterwards."""

    def __init__(self) -> None:
        self.events: list[AnyEvent] = []

    def emit(self, event: AnyEvent) -> None:
        self.events.append(event)

    def of(self, kind: str) -> list[AnyEvent]:
        return [e for e in self.events if e.event == kind]
