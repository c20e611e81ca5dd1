"""Runs a plan's PENDING tasks: eager dispatch (default) or PaiCLI-style batches, SKIPPED propagation,
cancellation. Replanning is decided by the caller (paicli/plan/session.py) once nothing more can run.

Eager: a task starts the moment its last dependency completes, limited by `max_parallel`; ties start in
topological order. Nothing polls: the loop wakes only when a running task finishes.

Tasks started early (streamed planning, paicli/plan/early.py) are handed over still running: `run(plan,
running)` waits for them like for its own, and they count against `max_parallel`.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, Protocol

from paicli.common.errors import PaicliError
from paicli.common.events import EventSink, TaskFinished, TaskStarted
from paicli.plan.contract import may_write
from paicli.plan.model import Plan, Task, TaskStatus


class TaskRunner(Protocol):
    """Runs one task to its result text; raises (PaicliError or anything) when the task fails."""

    async def __call__(self, plan: Plan, task: Task) -> str: ...


PlanListener = Callable[[Plan], None]


class Scheduler:
    def __init__(
        self,
        runner: TaskRunner,
        sink: EventSink,
        *,
        max_parallel: int = 4,
        schedule: Literal["eager", "batch"] = "eager",
        on_change: PlanListener | None = None,
        unbounded: Callable[[Task], bool] | None = None,
    ) -> None:
        self.runner = runner
        self.sink = sink
        self.max_parallel = max(1, max_parallel)
        self.schedule = schedule
        self.on_change = on_change or (lambda plan: None)
        # Tasks that may write anywhere (commands without the sandbox, a FILE_WRITE from before contracts):
        # such a task never runs beside another task that may write, whatever the plan's dependencies say.
        self.unbounded = unbounded

    async def run(self, plan: Plan, adopted: Mapping[asyncio.Task[str], Task] | None = None) -> None:
        """Runs every PENDING task that can run, and waits for the `adopted` ones (RUNNING tasks of `plan`,
        started early). Afterwards each task is COMPLETED, FAILED, SKIPPED, or still PENDING only if
        cancelled. On cancellation running tasks are stopped and put back to PENDING."""
        state = _State(plan)
        for task_id in state.order:
            task = state.task(task_id)
            blocker = state.first_failed_dependency(task) if task.status is TaskStatus.PENDING else None
            if blocker:
                self._skip(state, task, blocker)
        running: dict[asyncio.Task[str], Task] = dict(adopted or {})
        try:
            if self.schedule == "eager":
                await self._eager(plan, state, running)
            else:
                await self._batches(plan, state, running)
        except asyncio.CancelledError:
            await self._stop(plan, running)
            raise

    async def _eager(self, plan: Plan, state: _State, running: dict[asyncio.Task[str], Task]) -> None:
        ready = state.initial_ready()
        while ready or running:
            deferred: list[tuple[int, str]] = []
            waiting_unbounded = False  # a task that may write anywhere was deferred in this pass
            while ready and len(running) < self.max_parallel:
                item = heapq.heappop(ready)
                task = state.task(item[1])
                if self._must_wait(task, running.values(), bool(deferred), waiting_unbounded):
                    deferred.append(item)
                    waiting_unbounded = waiting_unbounded or self._unbounded(task)
                    continue
                running[self._start(plan, task)] = task
            for item in deferred:
                heapq.heappush(ready, item)
            if not running:
                break
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: state.rank[running[f].id]):
                for task_id in self._finish(plan, state, running.pop(future), future):
                    heapq.heappush(ready, (state.rank[task_id], task_id))

    def _unbounded(self, task: Task) -> bool:
        return self.unbounded is not None and may_write(task) and self.unbounded(task)

    def _must_wait(self, task: Task, running: Iterable[Task], waiting: bool, waiting_unbounded: bool) -> bool:
        """Whether `task` waits for a writer: it may write anywhere and another writer runs or waits before
        it, or a task that may write anywhere runs or waits before it (so that one is not overtaken for ever)."""
        if self.unbounded is None or not may_write(task):
            return False
        writers = [other for other in running if may_write(other)]
        if self._unbounded(task):
            return bool(writers) or waiting
        return waiting_unbounded or any(self._unbounded(other) for other in writers)

    def _waves(self, ready: list[str], state: _State) -> list[list[str]]:
        """The ready ids in chunks of `max_parallel`, a task that may write anywhere in a chunk of its own
        beside the readers only."""
        if self.unbounded is None:
            alone: list[str] = []
            shared = ready
        else:
            alone = [i for i in ready if self._unbounded(state.task(i))]
            shared = [i for i in ready if not self._unbounded(state.task(i))]
        chunks = [shared[start : start + self.max_parallel] for start in range(0, len(shared), self.max_parallel)]
        return chunks + [[task_id] for task_id in alone]

    async def _batches(self, plan: Plan, state: _State, running: dict[asyncio.Task[str], Task]) -> None:
        if running:  # tasks started early: the first batch
            await asyncio.wait(running)
            for future in sorted(running, key=lambda f: state.rank[running[f].id]):
                self._finish(plan, state, running[future], future)
            running.clear()
        ready = [task_id for _, task_id in sorted(state.initial_ready())]
        while ready:
            next_ready: list[str] = []
            for chunk in self._waves(ready, state):
                for task_id in chunk:
                    task = state.task(task_id)
                    running[self._start(plan, task)] = task
                await asyncio.wait(running)
                for future in sorted(running, key=lambda f: state.rank[running[f].id]):
                    next_ready.extend(self._finish(plan, state, running[future], future))
                running.clear()
            ready = sorted(next_ready, key=state.rank.__getitem__)

    def _start(self, plan: Plan, task: Task) -> asyncio.Task[str]:
        task.started_early = False  # (run again after a resume: this run started with the plan)
        future = start_task(self.runner, plan, task, self.sink)
        self.on_change(plan)
        return future

    def _finish(self, plan: Plan, state: _State, task: Task, future: asyncio.Task[str]) -> list[str]:
        """Records the outcome; returns the ids that became ready."""
        if record_outcome(task, future, self.sink):
            self.on_change(plan)
            return state.completed(task.id)
        for dependent_id in state.dependents_closure(task.id):
            dependent = state.task(dependent_id)
            if dependent.status is TaskStatus.PENDING:
                self._skip(state, dependent, state.first_failed_dependency(dependent) or task.id)
        self.on_change(plan)
        return []

    def _skip(self, state: _State, task: Task, blocker: str) -> None:
        task.status = TaskStatus.SKIPPED
        blocking = state.task(blocker)
        verb = "failed" if blocking.status is TaskStatus.FAILED else "was skipped"
        task.error = f"depends on {blocker}, which {verb}"
        task.finished_at = time.time()
        self.sink.emit(TaskFinished(task_id=task.id, status=TaskStatus.SKIPPED, error=task.error))

    async def _stop(self, plan: Plan, running: dict[asyncio.Task[str], Task]) -> None:
        for future in running:
            future.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for task in running.values():
            task.status = TaskStatus.PENDING
            task.started_at = task.finished_at = None
        running.clear()
        self.on_change(plan)


def start_task(runner: TaskRunner, plan: Plan, task: Task, sink: EventSink) -> asyncio.Task[str]:
    """`task` RUNNING, `task_started` emitted, and its run as an asyncio task."""
    task.status = TaskStatus.RUNNING
    task.started_at = time.time()
    task.finished_at = None
    task.waited = 0.0
    task.error = None
    sink.emit(TaskStarted(task_id=task.id))
    return asyncio.create_task(runner(plan, task), name=f"paicli-task-{task.id}")


def record_outcome(task: Task, future: asyncio.Task[str], sink: EventSink) -> bool:
    """The finished run's outcome on `task` (COMPLETED with its result, or FAILED with its error) and its
    `task_finished`; True when it completed."""
    task.finished_at = time.time()
    error = future.exception()
    if error is None:
        task.status = TaskStatus.COMPLETED
        task.result = future.result()
        sink.emit(TaskFinished(task_id=task.id, status=TaskStatus.COMPLETED, result=task.result))
        return True
    task.status = TaskStatus.FAILED
    task.error = str(error) if isinstance(error, PaicliError) else f"{type(error).__name__}: {error}"
    sink.emit(TaskFinished(task_id=task.id, status=TaskStatus.FAILED, error=task.error))
    return False


class _State:
    """Dependency bookkeeping for one `Scheduler.run`: O(V + E) overall."""

    def __init__(self, plan: Plan) -> None:
        self.by_id = {task.id: task for task in plan.tasks}
        self.order = plan.topological_order()
        self.rank = {task_id: i for i, task_id in enumerate(self.order)}
        self.dependents: dict[str, list[str]] = {task.id: [] for task in plan.tasks}
        self.waiting: dict[str, int] = {}
        for task in plan.tasks:
            for dep in task.dependencies:
                self.dependents[dep].append(task.id)
            if task.status is TaskStatus.PENDING:
                self.waiting[task.id] = sum(
                    1 for dep in task.dependencies if self.by_id[dep].status is not TaskStatus.COMPLETED
                )

    def task(self, task_id: str) -> Task:
        return self.by_id[task_id]

    def first_failed_dependency(self, task: Task) -> str | None:
        for dep in task.dependencies:
            if self.task(dep).status in (TaskStatus.FAILED, TaskStatus.SKIPPED):
                return dep
        return None

    def initial_ready(self) -> list[tuple[int, str]]:
        ready = [
            (self.rank[task_id], task_id)
            for task_id, count in self.waiting.items()
            if count == 0 and self.task(task_id).status is TaskStatus.PENDING
        ]
        heapq.heapify(ready)
        return ready

    def completed(self, task_id: str) -> list[str]:
        became_ready = []
        for dependent in self.dependents[task_id]:
            if dependent in self.waiting:
                self.waiting[dependent] -= 1
                if self.waiting[dependent] == 0 and self.task(dependent).status is TaskStatus.PENDING:
                    became_ready.append(dependent)
        return became_ready

    def dependents_closure(self, task_id: str) -> list[str]:
        seen: set[str] = set()
        stack = [task_id]
        order: list[str] = []
        while stack:
            for dependent in self.dependents[stack.pop()]:
                if dependent not in seen:
                    seen.add(dependent)
                    order.append(dependent)
                    stack.append(dependent)
        return sorted(order, key=self.rank.__getitem__)
