from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paicli.errors import ConfigError
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.store import PlanRecorder, PlanStore, plan_from_file, prepare_resume


def sample_plan() -> Plan:
    plan = Plan(
        goal="Add a CLI flag",
        summary="two steps",
        tasks=[Task(id="a", description="read"), Task(id="b", description="write", dependencies=["a"])],
    )
    plan.task("a").status, plan.task("a").result = TaskStatus.COMPLETED, "read 3 files"
    plan.task("b").status, plan.task("b").error = TaskStatus.FAILED, "model exploded"
    plan.status = PlanStatus.FAILED
    return plan


def test_a_plan_is_saved_as_json_and_markdown_and_loads_back(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    recorder = PlanRecorder(store, failure=lambda: "b failed")
    recorder(sample_plan())  # no event loop: written at once
    (saved,) = store.list()
    assert saved.id.endswith("add-a-cli-flag") and saved.failure == "b failed"
    assert store.load(saved.id).plan == sample_plan()
    markdown = (tmp_path / ".paicli" / "plans" / f"{saved.id}.md").read_text()
    assert "✓ a [ANALYSIS] COMPLETED" in markdown and "> read 3 files" in markdown
    assert "Error: model exploded" in markdown


def test_unknown_or_unsafe_ids_are_a_clear_error(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    for plan_id in ("nope", "../../etc/passwd"):
        with pytest.raises(ConfigError, match="no saved plan"):
            store.load(plan_id)


def test_ids_are_unique_for_the_same_goal(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    first, second = PlanRecorder(store), PlanRecorder(store)
    first(sample_plan())
    second(sample_plan())
    assert first.plan_id != second.plan_id and len(store.list()) == 2


def test_resume_keeps_completed_results_and_resets_the_rest() -> None:
    plan = prepare_resume(sample_plan())
    assert plan.task("a").status is TaskStatus.COMPLETED and plan.task("a").result == "read 3 files"
    assert plan.task("b").status is TaskStatus.PENDING and plan.task("b").error is None
    assert plan.status is PlanStatus.CREATED
    done = sample_plan()
    done.status = PlanStatus.COMPLETED
    with pytest.raises(ConfigError, match="already COMPLETED"):
        prepare_resume(done)


def test_latest_resumable_skips_completed_plans(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    failed = PlanRecorder(store)
    failed(sample_plan())
    completed_plan = sample_plan()
    completed_plan.status = PlanStatus.COMPLETED
    PlanRecorder(store)(completed_plan)
    latest = store.latest_resumable()
    assert latest is not None and latest.id == failed.plan_id


async def test_inside_a_loop_changes_are_saved_together_off_the_loop_and_flush_waits(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    recorder = PlanRecorder(store)
    plan = sample_plan()
    for status in (PlanStatus.RUNNING, PlanStatus.FAILED, PlanStatus.CANCELLED):
        plan.status = status
        recorder(plan)
    assert store.list() == []  # nothing written yet: the three changes of this turn are one save
    await recorder.flush()
    (saved,) = store.list()
    assert saved.plan.status is PlanStatus.CANCELLED
    plan.status = PlanStatus.RUNNING
    recorder(plan)
    await asyncio.sleep(0.2)  # saved soon after, without a flush
    assert store.load(saved.id).plan.status is PlanStatus.RUNNING


def test_a_hand_written_plan_file_is_validated(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"goal": "ship", "tasks": [{"id": "x", "description": "do", "dependencies": []}]}))
    plan = plan_from_file(good)
    assert plan.goal == "ship" and plan.ids() == ["x"]
    cyclic = tmp_path / "cyclic.json"
    cyclic.write_text(json.dumps({"tasks": [
        {"id": "x", "description": "do", "dependencies": ["y"]},
        {"id": "y", "description": "do", "dependencies": ["x"]},
    ]}))  # fmt: skip
    with pytest.raises(ConfigError, match=r"cyclic\.json: .*(x → y → x|y → x → y)"):
        plan_from_file(cyclic)
    with pytest.raises(ConfigError, match="cannot read"):
        plan_from_file(tmp_path / "missing.json")
