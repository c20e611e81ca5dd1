"""Checkpoints around plan tasks: which tasks get them, and the scheduler's runner that takes them."""

from __future__ import annotations

from paicli.app.checkpoints.service import Checkpoints
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
    action = getattr(task, "action", None)
    tool_name = getattr(action, "tool", None)
    if not isinstance(tool_name, str):
        return False
    tool = builtin_tool(tool_name)
    return tool is None or tool.effect is not Effect.READ


class CheckpointedRunner:
    """Wraps the scheduler's runner: a step begins before a task that may write, and every task's step
    ends when the task does (finished, failed or cancelled)."""

    def __init__(self, runner: TaskRunner, checkpoints: Checkpoints) -> None:
        self.runner = runner
        self.checkpoints = checkpoints

    async def __call__(self, plan: Plan, task: Task) -> str:
        try:
            if may_write(task):
                await self.checkpoints.begin_step(task.id)
            return await self.runner(plan, task)
        finally:
            await self.checkpoints.end_step(task.id)
