"""Early start (streamed planning): read-only tasks run while the planner is still writing the plan.

`EarlyStart` listens to the planner's stream (paicli/plan/streamed.py). A streamed task starts at once when
- it can only read (FILE_READ or ANALYSIS, so `contract.may_write` is false; the gate holds every call of
  such a task to reading, as for any task) and the plan contract finds nothing wrong with it on its own;
- each of its dependencies started early and COMPLETED (or it has none);
- fewer than `max_parallel` early tasks run.
Writers, commands and verification wait for the whole, validated plan: the overlap check needs every
task's `files`. With a `prefetch` runner, the first model request of such a task (one without an `action`,
the contract finding nothing wrong with it on its own) is sent as soon as its dependencies completed early
(or at once when it has none), and its reply kept for the scheduler (paicli/plan/prefetch.py): the task
itself starts only once the plan is approved, as any other.

The events of early tasks go through `HeldEvents`, which keeps them until the session has written
`plan_created` and `plan_approved`, then lets them through in their order and with their own `ts`.

When the whole plan is in, `adopt(plan)` hands each early task over to it if the plan has a task of the
same id and spec (description, type, dependencies, files, action): the plan then holds the early task
itself, running or finished and marked `started_early` (the saved plan keeps the mark), and the
scheduler takes a running one over. An early task the plan does not have, or has changed, is discarded:
stopped if it still runs, its events dropped, a notice saying so; so are the early tasks that depend on
it. A reply asked again (`restart`) discards nothing by itself: its tasks come again, and the same spec
keeps the early task, a changed one discards it.

`stop()` (planning failed or was cancelled) cancels every early task still running at once and drops
the held events: no plan came, so none of its tasks' events are written, and a task that only read
changed nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from paicli.common.events import AnyEvent, EventSink, Notice
from paicli.plan.contract import may_write
from paicli.plan.model import Plan, Task, TaskStatus
from paicli.plan.prefetch import Prefetched
from paicli.plan.scheduler import TaskRunner, record_outcome, start_task


class HeldEvents:
    """A sink that keeps the events of the tasks it is told to hold until `release()`; the rest pass."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.released = False
        self._ids: set[str] = set()
        self._dropped: set[str] = set()
        self._held: list[AnyEvent] = []

    def emit(self, event: AnyEvent) -> None:
        task_id = getattr(event, "task_id", None)
        if self.released or task_id is None or task_id not in self._ids | self._dropped:
            self.sink.emit(event)
        elif task_id in self._ids:
            self._held.append(event)

    def hold(self, task_id: str) -> None:
        self._ids.add(task_id)
        self._dropped.discard(task_id)

    def drop(self, task_id: str) -> None:
        """Forgets the task's held events, and swallows any it still emits before the release."""
        self._ids.discard(task_id)
        self._dropped.add(task_id)
        self._held = [event for event in self._held if getattr(event, "task_id", None) != task_id]

    def release(self) -> None:
        held, self._held = self._held, []
        self.released = True
        for event in held:
            self.sink.emit(event)

    def discard(self) -> None:
        self._held = []
        self._dropped |= self._ids


class EarlyStart:
    def __init__(
        self,
        runner: TaskRunner,
        held: HeldEvents,
        *,
        max_parallel: int,
        problems: Callable[[Task], list[str]],
        requests: Callable[[], int] = lambda: 0,
        prefetch: TaskRunner | None = None,
        kept: Prefetched | None = None,
    ) -> None:
        self.runner = runner
        self.prefetch = prefetch  # runs a writer's loop up to its first request (cancelled there)
        self.kept = kept  # the replies of those requests, until the scheduler's loops take them
        self.held = held
        self.max_parallel = max(1, max_parallel)
        self.problems = problems  # the plan contract's problems of one task on its own
        self.requests = requests  # model requests the early tasks made (they count in plan_finished)
        self.plan = Plan(goal="", tasks=[])  # the streamed tasks so far: where an early task finds its dependencies
        self.started: dict[str, Task] = {}  # every early task not discarded, in the order they started
        self.discarded: list[str] = []
        self._running: dict[str, asyncio.Task[str]] = {}
        self._handed: list[asyncio.Task[str]] = []  # running when adopted: the scheduler's, or stop()'s if it never ran
        self._waiting: list[Task] = []
        self._writers: list[Task] = []  # writers whose first request waits for their dependencies
        self._prefetching: set[asyncio.Task[str]] = set()
        self._closed = False

    def begin(self, goal: str) -> None:
        """Planning `goal` begins."""
        self.plan.goal = goal

    # ---- the planner's listener (paicli/plan/streamed.py) -------------------------------------------

    def task(self, task: Task) -> None:
        if self._closed:
            return
        earlier = self.started.get(task.id)
        if earlier is not None:
            if earlier.spec() == task.spec():
                return  # the same task again (a reply asked again): it keeps its run
            self._discard(task.id, "the planner changed it")
        self._waiting = [waiting for waiting in self._waiting if waiting.id != task.id]
        self.plan.tasks = [known for known in self.plan.tasks if known.id != task.id] + [task]
        self._writers = [waiting for waiting in self._writers if waiting.id != task.id]
        if self.problems(task):
            return
        if not may_write(task):
            self._waiting.append(task)
        elif self.prefetch is not None and task.action is None:
            self._writers.append(task)
        self._dispatch()

    def restart(self) -> None:
        """A new reply: tasks that did not start are forgotten (the new reply gives them again, or not)."""
        self._waiting.clear()
        self._writers.clear()
        self.plan.tasks = [task for task in self.plan.tasks if task.id in self.started]

    # ---- running -------------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        for writer in list(self._writers):
            if all(self._completed(dep) for dep in writer.dependencies):
                self._writers.remove(writer)
                self._send_first(writer)
        for task in list(self._waiting):
            if len(self._running) >= self.max_parallel:
                return
            if all(self._completed(dep) for dep in task.dependencies):
                self._waiting.remove(task)
                self._start(task)

    def _completed(self, task_id: str) -> bool:
        task = self.started.get(task_id)
        return task is not None and task.status is TaskStatus.COMPLETED

    def _start(self, task: Task) -> None:
        task.started_early = True
        self.started[task.id] = task
        self.held.hold(task.id)
        future = start_task(self.runner, self.plan, task, self.held)
        future.add_done_callback(_retrieved)
        future.add_done_callback(partial(self._finished, task))
        self._running[task.id] = future

    def _send_first(self, task: Task) -> None:
        """The writer's loop runs up to its first request, which goes out; the loop is then cancelled."""
        assert self.prefetch is not None
        early = task.model_copy(deep=True)  # the plan's task is the scheduler's to run
        future = asyncio.create_task(self.prefetch(self.plan, early), name=f"paicli-first-request-{task.id}")
        future.add_done_callback(_retrieved)
        future.add_done_callback(self._prefetching.discard)
        self._prefetching.add(future)

    def _finished(self, task: Task, future: asyncio.Task[str]) -> None:
        if self._running.get(task.id) is not future:
            return
        del self._running[task.id]
        if not future.cancelled():
            record_outcome(task, future, self.held)
        self._dispatch()

    def _discard(self, task_id: str, why: str) -> None:
        task = self.started.pop(task_id, None)
        if task is None:
            return
        future = self._running.pop(task_id, None)
        if future is not None:
            future.cancel()
        self.held.drop(task_id)
        self.discarded.append(task_id)
        self.plan.tasks = [known for known in self.plan.tasks if known.id != task_id]
        self.held.emit(Notice(level="info", message=f"{task_id} started early, but {why}: its result is discarded"))
        for other in list(self.started.values()):
            if task_id in other.dependencies:
                self._discard(other.id, f"it depends on {task_id}, which was discarded")

    # ---- the end of planning -------------------------------------------------------------------------

    def adopt(self, plan: Plan) -> dict[asyncio.Task[str], Task]:
        """Hands the early tasks the validated `plan` keeps over to it; returns the ones still running
        (for the scheduler). Nothing starts early after this."""
        self._closed = True
        self._waiting.clear()
        self._writers.clear()
        index = {task.id: number for number, task in enumerate(plan.tasks)}
        kept: set[str] = set()
        for task_id, early in list(self.started.items()):
            if task_id not in self.started:
                continue  # discarded with a dependency
            number = index.get(task_id, -1)
            planned = plan.tasks[number] if number >= 0 else None
            if planned is None or planned.status is not TaskStatus.PENDING:
                self._discard(task_id, "the plan does not have it")
            elif planned.spec() != early.spec() or planned.round != early.round:
                self._discard(task_id, "the plan changed it")
            elif not set(early.dependencies) <= kept:
                self._discard(task_id, "a task it depends on was discarded")
            else:
                plan.tasks[number] = early
                kept.add(task_id)
        running, self._running = self._running, {}
        self._handed = list(running.values())
        return {future: self.started[task_id] for task_id, future in running.items()}

    async def stop(self) -> None:
        """Cancels the early tasks still running (planning failed or was cancelled, or the run ended before
        the scheduler took them over) and drops the events still held."""
        self._closed = True
        self._waiting.clear()
        self._writers.clear()
        running = [*self._running.values(), *(future for future in self._handed if not future.done())]
        running += self._prefetching
        self._running, self._handed, self._prefetching = {}, [], set()
        for future in running:
            future.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for task in self.started.values():
            if task.status is TaskStatus.RUNNING:
                task.status = TaskStatus.PENDING
                task.started_at = None
        if not self.held.released:
            self.held.discard()
        if self.kept is not None:
            await self.kept.discard()


def _retrieved(future: asyncio.Task[str]) -> None:
    """Marks a discarded run's failure as seen, so asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()
