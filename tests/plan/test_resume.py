"""Resuming a saved plan: validated like a new one, nothing left RUNNING, results from the file marked."""

from __future__ import annotations

import pytest

from paicli.common.errors import ConfigError
from paicli.common.events import ListSink
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.resume import prepare_resume, rerun
from paicli.plan.scheduler import Scheduler
from paicli.plan.session import PlanSession


def task(task_id: str, status: TaskStatus = TaskStatus.PENDING, *deps: str, round: int = 1) -> Task:
    result = f"result of {task_id}" if status is TaskStatus.COMPLETED else None
    return Task(
        id=task_id, description=f"do {task_id}", status=status, dependencies=list(deps), result=result, round=round
    )


def plan_of(*tasks: Task, round: int = 1) -> Plan:
    return Plan(goal="g", tasks=list(tasks), status=PlanStatus.FAILED, round=round)


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (plan_of(), "it has no tasks"),
        (plan_of(task("a"), task("b", TaskStatus.PENDING, "zz")), 'task "b" depends on "zz", which is not a task'),
        (plan_of(task("a", TaskStatus.PENDING, "a")), 'task "a" depends on itself'),
        (plan_of(task("a", TaskStatus.PENDING, "b"), task("b", TaskStatus.PENDING, "a")), "form a cycle: a → b → a"),
        (plan_of(task("a"), task("a")), 'task id "a" is used by 2 tasks'),
        (plan_of(task(" ")), "task #1 has a blank id"),
        (plan_of(task("x" * 5000)), "task #1 has an id of 5,000 characters"),
        (plan_of(task("a", round=7)), 'task "a" is of round 7, the plan of round 1'),
        (plan_of(task("a", TaskStatus.FAILED), round=2), "its latest round (2) has no tasks"),
        (Plan(goal=" ", tasks=[task("a")]), "it has no goal"),
    ],
    ids=[
        "empty",
        "missing-dependency",
        "self",
        "cycle",
        "duplicate",
        "blank-id",
        "long-id",
        "future-round",
        "empty-round",
        "no-goal",
    ],
)
def test_a_saved_plan_that_is_not_valid_is_refused_with_one_line(plan: Plan, expected: str) -> None:
    with pytest.raises(ConfigError, match="the saved plan cannot be resumed") as caught:
        prepare_resume(plan)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_nothing_is_left_running_and_completed_results_are_marked_as_from_the_file() -> None:
    plan = plan_of(
        task("old_done", TaskStatus.COMPLETED),
        task("old_running", TaskStatus.RUNNING),
        task("old_failed", TaskStatus.FAILED),
        task("a", TaskStatus.COMPLETED, "old_done", round=2),
        task("b", TaskStatus.RUNNING, "a", round=2),
        task("c", TaskStatus.SKIPPED, "b", round=2),
        round=2,
    )
    resumed = prepare_resume(plan)
    status = {t.id: t.status for t in resumed.tasks}
    assert status == {
        "old_done": TaskStatus.COMPLETED,
        "old_running": TaskStatus.SKIPPED,  # an earlier round: history, but never RUNNING
        "old_failed": TaskStatus.FAILED,
        "a": TaskStatus.COMPLETED,
        "b": TaskStatus.PENDING,
        "c": TaskStatus.PENDING,
    }
    assert [t.id for t in resumed.tasks if t.from_saved] == ["old_done", "a"]
    assert resumed.status is PlanStatus.CREATED


class Runner:
    def __init__(self) -> None:
        self.ran: list[str] = []

    async def __call__(self, plan: Plan, task: Task) -> str:
        self.ran.append(task.id)
        return f"fresh {task.id}"


async def test_a_running_task_left_in_an_earlier_round_no_longer_blocks_and_the_plan_does_not_fake_success() -> None:
    # Round 2 depends on a task the file says is still RUNNING in round 1 (a real run never leaves one).
    plan = plan_of(task("stuck", TaskStatus.RUNNING), task("next", TaskStatus.PENDING, "stuck", round=2), round=2)
    runner, sink = Runner(), ListSink()
    session = PlanSession(
        planner=None,  # type: ignore[arg-type]  # the replan is refused below: max_replans=0
        scheduler=Scheduler(runner, sink),
        sink=sink,
        replanner_prompt="R",
        max_replans=0,
    )
    outcome = await session.run(plan=prepare_resume(plan))
    assert outcome.status is PlanStatus.FAILED  # not COMPLETED with a task that never ran
    assert "skipped: next" in (outcome.failure or "")
    assert runner.ran == []


async def test_a_resumed_plan_runs_what_is_pending_and_keeps_file_results() -> None:
    plan = prepare_resume(plan_of(task("a", TaskStatus.COMPLETED), task("b", TaskStatus.RUNNING, "a")))
    runner, sink = Runner(), ListSink()
    session = PlanSession(planner=None, scheduler=Scheduler(runner, sink), sink=sink, replanner_prompt="R")  # type: ignore[arg-type]
    outcome = await session.run(plan=plan)
    assert outcome.status is PlanStatus.COMPLETED and runner.ran == ["b"] and outcome.plan is not None
    assert outcome.plan.task("a").result == "result of a" and outcome.plan.task("a").from_saved


def test_rerun_resets_the_task_and_the_completed_tasks_that_depend_on_it() -> None:
    plan = prepare_resume(
        plan_of(
            task("a", TaskStatus.COMPLETED),
            task("b", TaskStatus.COMPLETED, "a"),
            task("c", TaskStatus.COMPLETED, "b"),
            task("d", TaskStatus.COMPLETED),
            task("e", TaskStatus.FAILED, "a"),
            round=1,
        )
    )
    again, reset = rerun(plan, "b")
    assert reset == ["b", "c"]
    assert {t.id: t.status for t in again.tasks} == {
        "a": TaskStatus.COMPLETED,
        "b": TaskStatus.PENDING,
        "c": TaskStatus.PENDING,
        "d": TaskStatus.COMPLETED,
        "e": TaskStatus.PENDING,
    }
    assert again.task("b").result is None and not again.task("b").from_saved
    assert plan.task("b").status is TaskStatus.COMPLETED  # the original is untouched
    with pytest.raises(ValueError, match="not COMPLETED"):
        rerun(again, "b")


def test_rerun_of_an_earlier_round_task_moves_it_into_the_latest_round() -> None:
    plan = prepare_resume(
        plan_of(task("a", TaskStatus.COMPLETED), task("b", TaskStatus.PENDING, "a", round=2), round=2)
    )
    again, reset = rerun(plan, "a")
    assert reset == ["a"] and again.task("a").round == 2 and again.task("a").status is TaskStatus.PENDING
