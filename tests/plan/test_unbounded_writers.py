"""Without the sandbox a command's writes are not held to its `files`: such a task never runs beside
another task that may write (issue 29, finding 1, the route the sandbox cannot close). Readers still run
beside anything, and a waiting command is not overtaken for ever by later writers."""

from __future__ import annotations

import asyncio
import time

import pytest

from paicli.common.events import ListSink
from paicli.plan.contract import held_to_files
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.plan.scheduler import Scheduler


class Spans:
    def __init__(self) -> None:
        self.spans: dict[str, tuple[float, float]] = {}

    async def __call__(self, plan: Plan, task: Task) -> str:
        start = time.monotonic()
        await asyncio.sleep(0.05)
        self.spans[task.id] = (start, time.monotonic())
        return "ok"

    def overlap(self, a: str, b: str) -> bool:
        (a0, a1), (b0, b1) = self.spans[a], self.spans[b]
        return a0 < b1 and b0 < a1


def task(task_id: str, kind: TaskType, files: list[str] | None = None) -> Task:
    return Task(id=task_id, description=task_id, type=kind, files=files)


async def run(plan: Plan, *, sandboxed: bool, schedule: str = "eager") -> Spans:
    spans = Spans()
    scheduler = Scheduler(
        spans,
        ListSink(),
        max_parallel=8,
        schedule=schedule,  # type: ignore[arg-type]
        unbounded=lambda t: not held_to_files(t, sandboxed=sandboxed),
    )
    await scheduler.run(plan)
    assert all(t.status is TaskStatus.COMPLETED for t in plan.tasks)
    return spans


def racing_plan() -> Plan:
    return Plan(
        goal="g",
        tasks=[
            task("write", TaskType.FILE_WRITE, ["a.txt"]),
            task("append", TaskType.COMMAND),
            task("check", TaskType.VERIFICATION, ["out.txt"]),
            task("read", TaskType.FILE_READ),
            task("write2", TaskType.FILE_WRITE, ["b.txt"]),
        ],
    )


@pytest.mark.parametrize("schedule", ["eager", "batch"])
async def test_without_the_sandbox_commands_run_alone_among_writers(schedule: str) -> None:
    spans = await run(racing_plan(), sandboxed=False, schedule=schedule)
    for command in ("append", "check"):
        for other in ("write", "append", "check", "write2"):
            assert other == command or not spans.overlap(command, other), (command, other)
    assert spans.overlap("read", "write") or spans.overlap("read", "append")  # readers are not held back


async def test_in_the_sandbox_the_same_plan_runs_all_at_once() -> None:
    spans = await run(racing_plan(), sandboxed=True)
    assert spans.overlap("write", "append") and spans.overlap("check", "write2")


def test_what_is_held_to_its_files() -> None:
    assert held_to_files(task("w", TaskType.FILE_WRITE, ["a"]), sandboxed=False)
    assert not held_to_files(task("w", TaskType.FILE_WRITE, None), sandboxed=True)  # a plan from before contracts
    assert not held_to_files(task("c", TaskType.COMMAND, ["a"]), sandboxed=False)
    assert held_to_files(task("c", TaskType.COMMAND, None), sandboxed=True)
    assert held_to_files(task("r", TaskType.ANALYSIS), sandboxed=False)
