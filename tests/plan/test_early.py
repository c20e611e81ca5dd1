"""`EarlyStart` and `HeldEvents` on their own, with a runner that waits for its cue: which streamed task
starts, what the validated plan keeps, what is discarded with it, and which events are held."""

from __future__ import annotations

import asyncio

from paicli.common.events import ListSink, Notice, PlanApproved
from paicli.plan.early import EarlyStart, HeldEvents
from paicli.plan.model import Plan, Task, TaskStatus, TaskType


class CuedRunner:
    """Each task runs until the test lets it finish (`done(id)`); records what it saw of its dependencies."""

    def __init__(self) -> None:
        self.cues: dict[str, asyncio.Event] = {}
        self.runs: list[str] = []
        self.seen: dict[str, list[str | None]] = {}

    async def __call__(self, plan: Plan, task: Task) -> str:
        self.runs.append(task.id)
        self.seen[task.id] = [plan.task(dep).result for dep in task.dependencies]
        await self.cues.setdefault(task.id, asyncio.Event()).wait()
        return f"{task.id} read it"

    def done(self, task_id: str) -> None:
        self.cues.setdefault(task_id, asyncio.Event()).set()


def task(tid: str, kind: TaskType = TaskType.ANALYSIS, deps: tuple[str, ...] = (), text: str = "") -> Task:
    return Task(id=tid, description=text or f"do {tid}", type=kind, dependencies=list(deps))


def early_start(runner: CuedRunner, sink: ListSink, max_parallel: int = 4) -> EarlyStart:
    starter = EarlyStart(runner, HeldEvents(sink), max_parallel=max_parallel, problems=lambda task: [])
    starter.begin("the goal")
    return starter


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_only_reads_start_and_a_dependent_read_waits_for_its_dependency() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink)
    starter.task(task("a"))
    starter.task(task("w", TaskType.FILE_WRITE))
    starter.task(task("c", TaskType.COMMAND))
    starter.task(task("b", TaskType.FILE_READ, deps=("a",)))
    starter.task(task("x", deps=("w",)))  # depends on a writer: never early
    await settle()
    assert runner.runs == ["a"]
    runner.done("a")
    await settle()
    assert runner.runs == ["a", "b"] and runner.seen["b"] == ["a read it"]
    assert sink.events == []  # everything held
    await starter.stop()


async def test_no_more_than_max_parallel_run_early() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink, max_parallel=2)
    for tid in ("a", "b", "c"):
        starter.task(task(tid))
    await settle()
    assert runner.runs == ["a", "b"]
    runner.done("b")
    await settle()
    assert runner.runs == ["a", "b", "c"]
    await starter.stop()


async def test_the_plan_keeps_same_specs_and_discards_changed_ones_with_their_dependents() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink)
    for streamed in (task("a"), task("b"), task("c", deps=("b",))):
        starter.task(streamed)
    runner.done("a")
    runner.done("b")
    await settle()
    assert runner.runs == ["a", "b", "c"]
    plan = Plan(goal="the goal", tasks=[task("a"), task("b", text="do b better"), task("c", deps=("b",)), task("d")])
    adopted = starter.adopt(plan)
    assert plan.task("a").status is TaskStatus.COMPLETED and plan.task("a").started_early
    assert plan.task("b").status is TaskStatus.PENDING and not plan.task("b").started_early  # changed: discarded
    assert plan.task("c").status is TaskStatus.PENDING  # it depends on the discarded b
    assert adopted == {}
    assert starter.discarded == ["b", "c"]
    messages = [e.message for e in sink.events if isinstance(e, Notice)]
    assert messages == [
        "b started early, but the plan changed it: its result is discarded",
        "c started early, but it depends on b, which was discarded: its result is discarded",
    ]
    starter.held.emit(PlanApproved(round=1))
    starter.held.release()
    ids = [getattr(e, "task_id", None) for e in sink.events if e.event in ("task_started", "task_finished")]
    assert ids == ["a", "a"]  # the discarded runs' events are gone; a's come after plan_approved


async def test_a_running_early_task_is_handed_over_and_no_longer_finished_here() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink)
    starter.task(task("a"))
    await settle()
    plan = Plan(goal="the goal", tasks=[task("a")])
    adopted = starter.adopt(plan)
    assert list(adopted.values()) == [plan.task("a")] and plan.task("a").status is TaskStatus.RUNNING
    runner.done("a")
    (future,) = adopted
    await future
    await settle()
    assert plan.task("a").status is TaskStatus.RUNNING  # recording the outcome is the scheduler's job now
    starter.task(task("z"))  # nothing starts after the plan is in
    await settle()
    assert runner.runs == ["a"]


async def test_a_new_reply_keeps_started_tasks_and_forgets_waiting_ones() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink, max_parallel=1)
    starter.task(task("a"))
    starter.task(task("b"))  # waits for a slot
    starter.restart()
    starter.task(task("a"))  # the same spec: the same run
    runner.done("a")
    await settle()
    assert runner.runs == ["a"]  # b was not given again
    assert [t.id for t in starter.plan.tasks] == ["a"]
    await starter.stop()


async def test_stop_cancels_running_tasks_and_drops_their_events() -> None:
    runner, sink = CuedRunner(), ListSink()
    starter = early_start(runner, sink)
    starter.task(task("a"))
    await settle()
    await starter.stop()
    assert starter.started["a"].status is TaskStatus.PENDING
    starter.held.release()
    assert sink.events == []
