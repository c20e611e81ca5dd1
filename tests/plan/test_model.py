"""The plan data model: lenient task types, lookups, derived dependents, and the event view."""

from __future__ import annotations

import pytest

from paicli.common.events import PlanCreated
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus, TaskType


def diamond() -> Plan:
    return Plan(
        goal="ship it",
        summary="read, change two files, test",
        tasks=[
            Task(id="read", description="read src/app.py", type=TaskType.FILE_READ),
            Task(id="edit_a", description="edit a.py", type=TaskType.FILE_WRITE, dependencies=["read"]),
            Task(id="edit_b", description="edit b.py", type=TaskType.FILE_WRITE, dependencies=["read"]),
            Task(id="test", description="run pytest", type=TaskType.VERIFICATION, dependencies=["edit_b", "edit_a"]),
        ],
    )


@pytest.mark.parametrize(
    "given, expected",
    [
        ("FILE_READ", TaskType.FILE_READ),
        ("file_write", TaskType.FILE_WRITE),
        ("  Command ", TaskType.COMMAND),
        ("file-read", TaskType.FILE_READ),
        ("file read", TaskType.FILE_READ),
        ("verification", TaskType.VERIFICATION),
        ("RESEARCH", TaskType.ANALYSIS),
        ("", TaskType.ANALYSIS),
        (None, TaskType.ANALYSIS),
        (3, TaskType.ANALYSIS),
    ],
)
def test_task_type_is_read_leniently_and_unknown_types_become_analysis(given: object, expected: TaskType) -> None:
    assert TaskType.lenient(given) is expected


def test_new_tasks_and_plans_start_pending_and_created() -> None:
    plan = diamond()
    assert plan.status is PlanStatus.CREATED
    assert plan.round == 1
    assert all(task.status is TaskStatus.PENDING and task.round == 1 for task in plan.tasks)
    assert plan.tasks[0].usage.total == 0


def test_task_lookup_by_id_and_missing_id_raises_key_error() -> None:
    plan = diamond()
    assert plan.task("edit_b").description == "edit b.py"
    with pytest.raises(KeyError):
        plan.task("nope")


def test_dependents_are_derived_from_dependencies_in_plan_order() -> None:
    plan = diamond()
    assert plan.dependents("read") == ["edit_a", "edit_b"]
    assert plan.dependents("edit_a") == ["test"]
    assert plan.dependents("test") == []
    plan.tasks[3].dependencies.remove("edit_a")
    assert plan.dependents("edit_a") == []


def test_topological_order_keeps_a_valid_given_order_and_fixes_an_invalid_one() -> None:
    plan = diamond()
    assert plan.topological_order() == ["read", "edit_a", "edit_b", "test"]
    reversed_plan = Plan(goal="g", tasks=list(reversed(plan.tasks)))
    assert reversed_plan.topological_order() == ["read", "edit_b", "edit_a", "test"]
    assert reversed_plan.ids() == ["test", "edit_b", "edit_a", "read"]  # display order untouched


def test_view_is_the_plan_created_event_payload_with_plain_strings() -> None:
    plan = diamond()
    plan.tasks[0].status = TaskStatus.COMPLETED
    event = PlanCreated(round=1, plan=plan.view())
    payload = event.model_dump(mode="json")
    assert payload["plan"]["summary"] == "read, change two files, test"
    assert payload["plan"]["tasks"][0] == {
        "id": "read",
        "description": "read src/app.py",
        "type": "FILE_READ",
        "dependencies": [],
        "status": "COMPLETED",
    }
    plan.tasks[1].files = ["src/a.py"]  # the plan contract's fields travel when declared
    assert PlanCreated(round=1, plan=plan.view()).model_dump(mode="json")["plan"]["tasks"][1]["files"] == ["src/a.py"]
    assert payload["plan"]["tasks"][3]["dependencies"] == ["edit_b", "edit_a"]


def test_spec_is_the_contract_plan_json_without_runtime_fields() -> None:
    plan = diamond()
    plan.tasks[0].result = "secret result"
    spec = plan.spec()
    assert set(spec) == {"summary", "tasks"}
    assert spec["tasks"][1] == {
        "id": "edit_a",
        "description": "edit a.py",
        "type": "FILE_WRITE",
        "dependencies": ["read"],
    }
    assert plan.spec(plan.tasks[2:3])["tasks"][0]["id"] == "edit_b"


def test_current_returns_only_the_latest_rounds_tasks() -> None:
    plan = diamond()
    plan.tasks.append(Task(id="fix", description="fix it", round=2))
    plan.round = 2
    assert [task.id for task in plan.current()] == ["fix"]


def test_finished_covers_completed_failed_and_skipped_only() -> None:
    statuses = {status: Task(id="t", description="d", status=status).finished for status in TaskStatus}
    assert statuses == {
        TaskStatus.PENDING: False,
        TaskStatus.RUNNING: False,
        TaskStatus.COMPLETED: True,
        TaskStatus.FAILED: True,
        TaskStatus.SKIPPED: True,
    }
