"""PlanSession with an in-process planner and runner: which plan is finished and saved when a run stops.

(The whole loop against the fake model server over HTTP is in tests/test_plan_headless.py.)
"""

from __future__ import annotations

import asyncio

import pytest

from paicli.common.errors import AgentError
from paicli.common.events import ListSink
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.scheduler import Scheduler
from paicli.plan.session import PlanSession


class ScriptedPlanner:
    """Gives the plans it was handed, in order; records the replan reasons."""

    def __init__(self, *plans: Plan) -> None:
        self.plans = list(plans)
        self.reasons: list[str] = []

    async def plan(self, goal: str, *, round: int = 1, attached: str = "") -> Plan:
        return self.plans.pop(0)

    async def replan(self, plan: Plan, *, reason: str, feedback: str | None = None, replanner_prompt: str) -> Plan:
        self.reasons.append(reason)
        return self.plans.pop(0)


class Runner:
    """Task "hang" waits forever, task "fail" fails, every other task completes."""

    async def __call__(self, plan: Plan, task: Task) -> str:
        if task.id == "hang":
            await asyncio.Event().wait()
        if task.id == "fail":
            raise AgentError("it broke")
        return f"done {task.id}"


def one_task_plan(task_id: str, round: int = 1) -> Plan:
    return Plan(goal="g", tasks=[Task(id=task_id, description=f"do {task_id}", round=round)], round=round)


def session(planner: ScriptedPlanner, saved: list[Plan], approve: object) -> PlanSession:
    sink = ListSink()
    return PlanSession(
        planner=planner,
        scheduler=Scheduler(Runner(), sink),
        sink=sink,
        replanner_prompt="R",
        approve=approve,  # type: ignore[arg-type]
        on_change=lambda plan: saved.append(plan.model_copy(deep=True)),
    )


async def test_a_cancel_after_an_edit_in_review_saves_the_edited_plan() -> None:
    edited = Plan(goal="g", tasks=[Task(id="edited", description="x"), Task(id="hang", description="y")])

    async def approve_with_an_edit(plan: Plan) -> Plan:
        return edited

    saved: list[Plan] = []
    job = asyncio.create_task(session(ScriptedPlanner(one_task_plan("original")), saved, approve_with_an_edit).run("g"))
    # "edited" ends at once, but the scheduler marks it a loop turn or two after "hang" starts: wait for both
    while (edited.task("hang").status, edited.task("edited").status) != (TaskStatus.RUNNING, TaskStatus.COMPLETED):
        await asyncio.sleep(0.01)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert saved[-1].ids() == ["edited", "hang"] and saved[-1].status is PlanStatus.CANCELLED
    assert saved[-1].task("edited").status is TaskStatus.COMPLETED


async def test_declining_the_replanned_round_cancels_with_the_new_plan() -> None:
    replanned = one_task_plan("retry", round=2)

    async def approve_only_round_one(plan: Plan) -> Plan | None:
        return plan if plan.round == 1 else None

    saved: list[Plan] = []
    planner = ScriptedPlanner(one_task_plan("fail"), replanned)
    outcome = await session(planner, saved, approve_only_round_one).run("g")
    assert outcome.plan is replanned and outcome.status is PlanStatus.CANCELLED is replanned.status
    assert outcome.exit_code() == 130
    assert planner.reasons == ["fail failed: it broke"]
    assert saved[-1].round == 2 and saved[-1].status is PlanStatus.CANCELLED
