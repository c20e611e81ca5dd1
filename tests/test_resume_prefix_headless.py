"""`paicli plan --resume` takes any unique beginning of a saved plan's id; one that fits several plans is a
usage error naming them."""

from __future__ import annotations

from pathlib import Path

from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.saved_plans import PlanRecord, PlanStore, render_markdown
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import requests_of, script_summary, task_is


def save(workspace: Path, plan_id: str, goal: str) -> None:
    tasks = [
        Task(id="done", description="x", status=TaskStatus.COMPLETED, result="DONE-EARLIER"),
        Task(id="left", description="y", dependencies=["done"]),
    ]
    record = PlanRecord(
        id=plan_id, created_at=1.0, updated_at=1.0, plan=Plan(goal=goal, tasks=tasks, status=PlanStatus.CANCELLED)
    )
    PlanStore(workspace).write(plan_id, record.model_dump_json(), render_markdown(record))


def test_resume_by_a_unique_beginning_and_an_ambiguous_one_refused(fake: FakeLLM, workspace: Path, home: Path) -> None:
    save(workspace, "20261201-101010-add-flag", "add a flag")
    save(workspace, "20261201-101010-add-tests", "add tests")
    env = paicli_env(fake, home)
    refused = run_paicli(["-C", str(workspace), "plan", "--resume", "20261201", "--yes"], env)
    assert refused.code == 2
    assert "20261201-101010-add-flag" in refused.stderr and "20261201-101010-add-tests" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and fake.requests == []
    fake.on(task_is("left"), Reply.text("LEFT-DONE"))
    script_summary(fake, "Resumed and finished.")
    done = run_paicli(["-C", str(workspace), "plan", "--resume", "20261201-101010-add-t", "--yes"], env)
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Resumed and finished."
    assert requests_of(fake, "done") == [] and "DONE-EARLIER" in requests_of(fake, "left")[0].text
    assert PlanStore(workspace).load("20261201-101010-add-tests").plan.status is PlanStatus.COMPLETED
    assert PlanStore(workspace).load("20261201-101010-add-flag").plan.status is PlanStatus.CANCELLED
