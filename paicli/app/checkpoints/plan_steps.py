"""Checkpoints around plan tasks: which tasks get them, the plan's entry, and the scheduler's runner that
takes them.

A plan's entry is filed under the id its saved plan has (so `paicli undo ID` and `--resume ID` name the
same plan), and is begun when the first task starts: by then the plan has been shown for approval and
saved, so its id is known, and a plan that never ran leaves no entry behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Future

from paicli.app.checkpoints.recording import Recording
from paicli.app.checkpoints.service import Checkpoints
from paicli.common.events import FileChange
from paicli.plan.model import Plan, Task, TaskType
from paicli.plan.scheduler import TaskRunner
from paicli.tools.base import Effect
from paicli.tools.toolbox import builtin_tool

WRITING_TYPES = frozenset({TaskType.FILE_WRITE, TaskType.COMMAND, TaskType.VERIFICATION})


def may_write(task: Task) -> bool:
    """Whether a task gets a checkpoint before it starts: its type may write, or it is one exact tool
    call (the plan contract's `action`) of a tool that is not read-only. Any other task that writes or
    runs a command anyway gets one at its first such call (the tool box tells the checkpoints)."""
    if task.type in WRITING_TYPES:
        return True
    if task.action is None:
        return False
    tool = builtin_tool(task.action.tool)
    return tool is None or tool.effect not in (Effect.READ, Effect.NETWORK)


class PlanSteps:
    """The checkpoints of one plan: its entry, begun at the first task, and a step per task run."""

    def __init__(self, checkpoints: Checkpoints, plan_id: Callable[[], str | None], goal: str) -> None:
        self.checkpoints = checkpoints
        self.plan_id = plan_id  # the saved plan's id, once it has one
        self.goal = goal
        self.recording: Recording | None = None
        self._starting = asyncio.Lock()
        self._ending: list[Future[None]] = []  # steps ended without waiting (CheckpointedRunner)

    async def started(self) -> Recording:
        async with self._starting:
            if self.recording is None:
                self.recording = await self.checkpoints.begin_plan(self.plan_id(), self.goal)
            return self.recording

    def end_step(self, task_id: str) -> None:
        if (ending := self.checkpoints.end_step_soon(task_id)) is not None:
            self._ending.append(ending)

    def changes(self) -> list[FileChange] | None:
        """The files changed so far: [] before any task ran, None once recording has failed."""
        return [] if self.recording is None else self.recording.changes()

    async def settle(self) -> None:
        """Waits for the steps still ending (at the end of a plan: at most the last checkpoint, which the
        summary request did not wait for)."""
        while self._ending:
            with contextlib.suppress(Exception):  # a failed step stops the recording: changes() says so
                await asyncio.shield(asyncio.wrap_future(self._ending.pop(0)))

    async def finish(self) -> list[FileChange] | None:
        if self.recording is None:
            return []
        return await self.checkpoints.finish(self.recording)


class CheckpointedRunner:
    """Wraps the scheduler's runner: a step begins before a task that may write (its checkpoint taken
    while the task's first request is out), and every task's step ends when the task does (finished,
    failed or cancelled)."""

    def __init__(self, runner: TaskRunner, steps: PlanSteps) -> None:
        self.runner = runner
        self.steps = steps

    async def __call__(self, plan: Plan, task: Task) -> str:
        try:
            await self.steps.started()
            if may_write(task):
                self.steps.checkpoints.begin_step_soon(task.id)
            return await self.runner(plan, task)
        finally:
            self.steps.end_step(task.id)
