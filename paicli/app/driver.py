"""Run a turn or a plan the same way in every front end: as an asyncio task that a cancel source (ESC
keys, SIGINT/SIGTERM) can stop at any moment, waited for, and turned into an outcome."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from paicli.agent.conversation import answered_part
from paicli.agent.react import ReactResult
from paicli.app.checkpoints.plan_steps import CheckpointedRunner, PlanSteps
from paicli.app.checkpoints.service import Checkpoints
from paicli.app.custom_commands import narrowed
from paicli.app.hook_points import approving, plan_ended, turn_ended
from paicli.common.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, ConfigError, PaicliError
from paicli.common.events import EventSink, FileChange, Notice
from paicli.llm.types import Message
from paicli.plan.model import Plan, PlanStatus
from paicli.plan.outcome import PlanOutcome
from paicli.plan.parse_reply import joined
from paicli.plan.session import Review
from paicli.plan_wiring import build_plan_session
from paicli.runtime import Runtime
from paicli.tools.effect import Effect
from paicli.tools.task_scope import TaskScope
from paicli.tools.toolbox import ToolBox

T = TypeVar("T")
READ_ONLY = TaskScope("this turn", "read-only", frozenset({Effect.READ}))
# Given the function that cancels the running work, a context manager that watches for the user's cancel
# (ESC, Ctrl-C, a signal) while it is entered.
CancelWatch = Callable[[Callable[[], None]], AbstractContextManager[object]]


async def until_done(work: Coroutine[Any, Any, T], watch: CancelWatch | None = None) -> asyncio.Task[T]:
    """Runs `work` as a task under `watch` and returns the finished task (done, cancelled or failed).

    If whoever awaits this is cancelled itself (SIGTERM in the REPL), the work is cancelled and awaited
    first, so nothing keeps running behind the caller's back."""
    job = asyncio.create_task(work)

    def cancel() -> None:
        job.cancel()

    with watch(cancel) if watch is not None else contextlib.nullcontext():
        try:
            await asyncio.wait({job})
        finally:
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job
    return job


async def run_plan(
    runtime: Runtime,
    sink: EventSink,
    *,
    goal: str | None,
    plan: Plan | None = None,
    plan_id: str | None = None,
    review: Review | None = None,
    watch: CancelWatch | None = None,
    checkpoints: Checkpoints | None = None,
    attached: str = "",
    allowed_tools: Sequence[str] | None = None,
    early: bool | None = None,
) -> PlanOutcome:
    """Plans `goal` (or runs `plan`) to the end. Without `review` every plan is approved unasked (--yes),
    and with `early` (default: the setting early_start) its read-only tasks start while it is planned.
    With `checkpoints`, every task that may write is checkpointed and the outcome (and `plan_finished`)
    carries the files the plan changed; `allowed_tools` (a custom command's) narrows the plan's tool set.
    A bug (not a PaicliError) is raised, never hidden."""
    if plan is not None and (problems := runtime.contract().problems(plan, require_files=False)):
        # a saved or hand-written plan was checked before its MCP tools were known (paicli/app/plan_inputs.py)
        return PlanOutcome(
            PlanStatus.FAILED,
            plan,
            failure=f"the plan breaks the plan contract: {joined(problems)}",
            configuration=True,
        )
    early = (runtime.settings.early_start if early is None else early) and review is None and plan is None
    tools = narrowed_tools(runtime, sink, allowed_tools)
    session = build_plan_session(runtime, sink, plan_id=plan_id, early=early, tools=tools)
    steps = None
    runtime.listings.warm(runtime.workspace)  # while the planner thinks: for the tasks' searches
    if checkpoints is not None:
        checkpoints.warm_up()  # while the planner thinks
        steps = PlanSteps(checkpoints, session.saved_id, goal or (plan.goal if plan else ""))
        session.scheduler.runner = CheckpointedRunner(session.scheduler.runner, steps)
        session.changes, session.settle = steps.changes, steps.settle
    if review is not None:
        reviewing = review

        async def approve(candidate: Plan) -> Plan | None:
            return await reviewing(candidate, session.planner.amend)

        session.approve = approve
    session.approve = approving(runtime, sink, session.approve)
    try:
        job = await until_done(session.run(goal, plan=plan, attached=attached), watch)
    finally:  # cancelled from outside too (SIGTERM): what ran stays undoable
        changes = await steps.finish() if steps is not None else None
    if job.cancelled():
        cancelled = PlanOutcome.cancelled(session.current, session.saved_id(), session.usage)
        outcome = dataclasses.replace(cancelled, changes=changes)
    elif isinstance(error := job.exception(), PaicliError):  # raised after the plan ended, e.g. its last save failed
        outcome = PlanOutcome(
            PlanStatus.FAILED,
            session.current,
            failure=str(error),
            configuration=isinstance(error, ConfigError),
            changes=changes,
            saved_id=session.saved_id(),
        )
    else:
        outcome = dataclasses.replace(job.result(), changes=changes)
    await plan_ended(runtime, sink, outcome)
    return outcome


@dataclass(frozen=True)
class TurnOutcome:
    """How a chat turn ended. `messages` is the conversation to keep: the whole turn when it answered,
    else its answered part (every tool call with its result), so the next request is consistent."""

    messages: list[Message]
    result: ReactResult | None = None
    cancelled: bool = False
    error: PaicliError | None = None
    changes: list[FileChange] | None = None  # the files the turn changed; None when checkpoints are off

    def exit_code(self) -> int:
        if self.cancelled:
            return EXIT_CANCELLED
        if self.error is not None:
            return EXIT_USAGE if isinstance(self.error, ConfigError) else EXIT_FAILED
        return EXIT_OK


async def run_turn(
    runtime: Runtime,
    sink: EventSink,
    messages: list[Message],
    *,
    watch: CancelWatch | None = None,
    checkpoints: Checkpoints | None = None,
    scope: TaskScope | None = None,
    allowed_tools: Sequence[str] | None = None,
) -> TurnOutcome:
    """One ReAct turn on `messages` (the last one is the user's). With `checkpoints` the workspace is
    checkpointed before and after, and the outcome carries the files the turn changed; `scope` limits
    what its tool calls may do (READ_ONLY: /init), `allowed_tools` (a custom command's) which tools it
    has. A bug is raised, never hidden."""
    tools = narrowed_tools(runtime, sink, allowed_tools)
    runtime.listings.warm(runtime.workspace)  # while the model thinks: for the turn's searches
    start = len(messages) - 1
    recording = None
    if checkpoints is not None:
        content = messages[-1].get("content")
        recording = await checkpoints.begin_turn(content if isinstance(content, str) else "")
    try:
        job = await until_done(runtime.react(sink, scope=scope, tools=tools).run(messages), watch)
    finally:  # cancelled from outside too (SIGTERM): what ran stays undoable
        changes = await checkpoints.finish(recording) if checkpoints is not None and recording is not None else None
    if job.cancelled():
        await turn_ended(runtime, sink, "cancelled", None)
        return TurnOutcome(answered_part(messages, start), cancelled=True, changes=changes)
    error = job.exception()
    if isinstance(error, PaicliError):
        await turn_ended(runtime, sink, "failed", None)
        return TurnOutcome(answered_part(messages, start), error=error, changes=changes)
    result = job.result()  # re-raises a bug
    await turn_ended(runtime, sink, "answered", result.content)
    return TurnOutcome(result.messages, result, changes=changes)


def narrowed_tools(runtime: Runtime, sink: EventSink, allowed: Sequence[str] | None) -> ToolBox | None:
    """The runtime's tools narrowed to `allowed` (None: not narrowed), with a notice for each entry that
    names no tool."""
    if allowed is None:
        return None
    tools, unmatched = narrowed(runtime.tools, allowed)
    if unmatched:
        sink.emit(Notice(level="warning", message=f"allowed-tools: no tool is named {', '.join(unmatched)}"))
    return tools


def run_with_signals(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Runs `main` in a new event loop with SIGINT and SIGTERM cancelling it; cancelled, it exits 130."""

    async def guarded() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await main()
        except asyncio.CancelledError:
            return EXIT_CANCELLED
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    return asyncio.run(guarded())
