"""Honest cancel and resume: only a saved plan is offered for resuming, a plan cancelled in review before
anything ran leaves no entry, and saved plans are found by any unique beginning of their id."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.common.events import ListSink
from paicli.plan.model import Plan, PlanStatus, Task
from paicli.plan.recorder import PlanRecorder
from paicli.plan.saved_plans import PlanStore
from paicli.plan.scheduler import Scheduler
from paicli.plan.session import PlanSession
from tests.plan.test_session import Runner, ScriptedPlanner, one_task_plan


def recorded_session(
    store: PlanStore, planner: ScriptedPlanner, approve: object, plan_id: str | None = None
) -> PlanSession:
    sink = ListSink()
    recorder = PlanRecorder(store, plan_id=plan_id)
    return PlanSession(
        planner=planner,
        scheduler=Scheduler(Runner(), sink),
        sink=sink,
        replanner_prompt="R",
        approve=approve,  # type: ignore[arg-type]
        on_change=recorder,
        flush=recorder.flush,
        saved_id=lambda: recorder.saved_id,
        discard=recorder.discard,
    )


async def decline(plan: Plan) -> None:
    return None


async def test_a_new_plan_cancelled_in_review_leaves_no_entry(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    outcome = await recorded_session(store, ScriptedPlanner(one_task_plan("a")), decline).run("g")
    assert outcome.status is PlanStatus.CANCELLED and outcome.saved_id is None
    assert store.ids() == [] and [p.name for p in store.folder.iterdir()] == [".gitignore"]  # the reserved id too


async def test_a_resumed_plan_cancelled_in_review_keeps_its_file(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    done = await recorded_session(store, ScriptedPlanner(one_task_plan("a")), lambda plan: _approved(plan)).run("g")
    assert done.status is PlanStatus.COMPLETED and done.saved_id is not None
    record = store.load(done.saved_id)
    again = await recorded_session(store, ScriptedPlanner(), decline, plan_id=record.id).run(plan=record.plan)
    assert again.saved_id == record.id and store.ids() == [record.id]


async def _approved(plan: Plan) -> Plan:
    return plan


async def test_a_plan_cancelled_while_it_runs_says_where_it_is_saved(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    hanging = Plan(goal="g", tasks=[Task(id="a", description="x"), Task(id="hang", description="y")])
    session = recorded_session(store, ScriptedPlanner(hanging), _approved)
    job = asyncio.create_task(session.run("g"))
    while session.saved_id() is None or not any(t.status.value == "RUNNING" for t in hanging.tasks):
        await asyncio.sleep(0.01)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    saved = session.saved_id()
    assert saved is not None and store.load(saved).plan.status is PlanStatus.CANCELLED


def test_saved_plans_are_found_by_a_unique_beginning_of_their_id(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    for plan_id in ("20261201-101010-add-flag", "20261201-101010-add-tests", "20261130-090000-docs"):
        store.write(plan_id, "{}", "")
    assert store.resolve("20261130") == "20261130-090000-docs"
    assert store.resolve("20261201-101010-add-f") == "20261201-101010-add-flag"
    assert store.resolve("20261201-101010-add-tests") == "20261201-101010-add-tests"
    with pytest.raises(ConfigError, match=r"fits several saved plans: .*add-(tests|flag), .*add-(flag|tests)"):
        store.resolve("20261201")
    assert store.resolve("2027") == "2027"
    with pytest.raises(ConfigError, match="no saved plan '2027'"):
        store.load(store.resolve("2027"))
    with pytest.raises(ConfigError, match="a plan id is a name"):
        store.resolve("../x")
