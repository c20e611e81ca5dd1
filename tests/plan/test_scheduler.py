"""Scheduler behaviour with a real asyncio runner whose tasks sleep for scripted durations.

(End-to-end runs against the fake model server are in tests/test_plan_headless.py.)
"""

from __future__ import annotations

import asyncio
import time

import pytest

from paicli.common.errors import AgentError
from paicli.common.events import ListSink
from paicli.plan.model import Plan, Task, TaskStatus
from paicli.plan.scheduler import Scheduler


def make_plan(spec: dict[str, list[str]]) -> Plan:
    return Plan(goal="g", tasks=[Task(id=i, description=f"do {i}", dependencies=d) for i, d in spec.items()])


class SleepyRunner:
    """Each task sleeps its scripted duration, records when it ran, and fails when told to."""

    def __init__(self, durations: dict[str, float], fail: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.durations = durations
        self.fail = fail
        self.spans: dict[str, tuple[float, float]] = {}
        self.seen_results: dict[str, dict[str, str | None]] = {}

    async def __call__(self, plan: Plan, task: Task) -> str:
        start = time.monotonic()
        self.seen_results[task.id] = {d: plan.task(d).result for d in task.dependencies}
        try:
            await asyncio.sleep(self.durations.get(task.id, 0.0))
        finally:
            self.spans[task.id] = (start, time.monotonic())
        if task.id in self.fail:
            raise AgentError(f"{task.id} broke")
        return f"result of {task.id}"


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


async def test_diamond_runs_middle_tasks_in_parallel_and_join_sees_both_results() -> None:
    plan = make_plan({"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]})
    runner = SleepyRunner({"a": 0.05, "b": 0.3, "c": 0.3, "d": 0.05})
    await Scheduler(runner, ListSink()).run(plan)
    assert all(t.status is TaskStatus.COMPLETED for t in plan.tasks)
    assert overlap(runner.spans["b"], runner.spans["c"])
    assert runner.seen_results["d"] == {"b": "result of b", "c": "result of c"}
    assert runner.spans["d"][0] >= max(runner.spans["b"][1], runner.spans["c"][1])


@pytest.mark.parametrize("schedule, starts_early", [("eager", True), ("batch", False)])
async def test_eager_starts_a_dependent_before_an_unrelated_slow_task_ends(schedule: str, starts_early: bool) -> None:
    plan = make_plan({"a": [], "b": [], "c": ["a"]})
    runner = SleepyRunner({"a": 0.05, "b": 0.6, "c": 0.05})
    await Scheduler(runner, ListSink(), schedule=schedule).run(plan)  # type: ignore[arg-type]
    assert (runner.spans["c"][0] < runner.spans["b"][1]) is starts_early


async def test_max_parallel_bounds_concurrency() -> None:
    plan = make_plan({f"t{i}": [] for i in range(6)})
    runner = SleepyRunner({f"t{i}": 0.1 for i in range(6)})
    await Scheduler(runner, ListSink(), max_parallel=2).run(plan)
    events = sorted([(s, 1) for s, _ in runner.spans.values()] + [(e, -1) for _, e in runner.spans.values()])
    live = peak = 0
    for _, step in events:
        live += step
        peak = max(peak, live)
    assert peak == 2


async def test_failure_skips_transitive_dependents_and_independent_work_continues() -> None:
    plan = make_plan({"a": [], "b": ["a"], "c": ["b"], "x": [], "y": ["x"]})
    sink = ListSink()
    await Scheduler(SleepyRunner({"a": 0.01, "x": 0.1}, fail={"a"}), sink).run(plan)
    assert plan.task("a").status is TaskStatus.FAILED and plan.task("a").error == "a broke"
    assert plan.task("b").status is TaskStatus.SKIPPED
    assert plan.task("b").error == "depends on a, which failed"
    assert plan.task("c").error == "depends on b, which was skipped"
    assert plan.task("y").status is TaskStatus.COMPLETED
    finished = [(e.task_id, e.status) for e in sink.of("task_finished")]  # type: ignore[attr-defined]
    assert ("b", "SKIPPED") in finished and ("y", "COMPLETED") in finished


async def test_completed_tasks_of_an_earlier_round_are_not_run_again() -> None:
    plan = make_plan({"a": [], "b": ["a"]})
    plan.task("a").status = TaskStatus.COMPLETED
    plan.task("a").result = "kept"
    runner = SleepyRunner({})
    await Scheduler(runner, ListSink()).run(plan)
    assert "a" not in runner.spans
    assert runner.seen_results["b"] == {"a": "kept"}


async def test_cancel_returns_running_tasks_to_pending() -> None:
    plan = make_plan({"a": [], "b": [], "c": ["a"]})
    runner = SleepyRunner({"a": 0.01, "b": 30.0, "c": 30.0})
    job = asyncio.create_task(Scheduler(runner, ListSink()).run(plan))
    while plan.task("c").status is not TaskStatus.RUNNING:
        await asyncio.sleep(0.01)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert plan.task("a").status is TaskStatus.COMPLETED
    assert plan.task("b").status is TaskStatus.PENDING and plan.task("c").status is TaskStatus.PENDING


async def test_a_long_chain_and_a_wide_fan_complete() -> None:
    chain = {f"t{i}": ([f"t{i - 1}"] if i else []) for i in range(500)}
    wide = {f"w{i}": [] for i in range(500)}
    plan = make_plan({**chain, **wide, "join": ["t499", *wide]})
    await Scheduler(SleepyRunner({}), ListSink(), max_parallel=8).run(plan)
    assert all(t.status is TaskStatus.COMPLETED for t in plan.tasks)


@pytest.mark.parametrize("schedule", ["eager", "batch"])
async def test_a_task_started_early_is_taken_over_running_and_its_dependents_follow(schedule: str) -> None:
    """Streamed planning hands the scheduler tasks already running (paicli/plan/early.py)."""
    from paicli.plan.scheduler import start_task

    plan = make_plan({"a": [], "b": ["a"], "c": []})
    runner = SleepyRunner({"a": 0.2, "b": 0.0, "c": 0.0})
    sink = ListSink()
    early = start_task(runner, plan, plan.task("a"), sink)
    await Scheduler(runner, sink, schedule=schedule).run(plan, {early: plan.task("a")})  # type: ignore[arg-type]
    assert [t.status for t in plan.tasks] == [TaskStatus.COMPLETED] * 3
    assert runner.spans["b"][0] >= runner.spans["a"][1]
    assert [e.task_id for e in sink.of("task_started")].count("a") == 1  # type: ignore[union-attr]
    assert [e.task_id for e in sink.of("task_finished")].count("a") == 1  # type: ignore[union-attr]


async def test_a_task_started_early_is_stopped_with_the_others_on_cancel() -> None:
    from paicli.plan.scheduler import start_task

    plan = make_plan({"a": [], "b": []})
    runner = SleepyRunner({"a": 30.0, "b": 30.0})
    early = start_task(runner, plan, plan.task("a"), ListSink())
    run = asyncio.create_task(Scheduler(runner, ListSink()).run(plan, {early: plan.task("a")}))
    await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert early.cancelled() and [t.status for t in plan.tasks] == [TaskStatus.PENDING] * 2
