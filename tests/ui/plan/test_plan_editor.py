"""The plan as editable text: round trip, edits that apply, precise errors, earlier rounds kept."""

from __future__ import annotations

import pytest

from paicli.common.errors import PlanError
from paicli.common.values import Usage
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.ui.plan.plan_editor import plan_to_text, text_to_plan


def plan() -> Plan:
    return Plan(
        goal="add a health endpoint",
        summary="read the app, add the endpoint, run the tests",
        tasks=[
            Task(id="task_1", description="Read src/app.py", type=TaskType.FILE_READ),
            Task(id="task_2", description="Add GET /health", type=TaskType.FILE_WRITE, dependencies=["task_1"]),
            Task(id="task_3", description="Run pytest -q", type=TaskType.COMMAND, dependencies=["task_2"]),
        ],
    )


def replanned() -> Plan:
    """Round 2: task_1 completed and task_2 failed in round 1; task_4 and task_5 are the new work."""
    return Plan(
        goal="add a health endpoint",
        summary="retry the endpoint",
        round=2,
        tasks=[
            Task(
                id="task_1",
                description="Read src/app.py",
                type=TaskType.FILE_READ,
                status=TaskStatus.COMPLETED,
                result="app uses Flask",
                usage=Usage(prompt_tokens=100, completion_tokens=20),
                started_at=1.0,
                finished_at=2.0,
            ),
            Task(
                id="task_2",
                description="Add GET /health",
                type=TaskType.FILE_WRITE,
                dependencies=["task_1"],
                status=TaskStatus.FAILED,
                error="edit_file: old_text not found",
            ),
            Task(id="task_4", description="Add the route", type=TaskType.FILE_WRITE, dependencies=["task_1"], round=2),
            Task(id="task_5", description="Run pytest", type=TaskType.VERIFICATION, dependencies=["task_4"], round=2),
        ],
    )


def test_round_trip_gives_the_same_plan() -> None:
    original = plan()
    assert text_to_plan(plan_to_text(original), original) == original


def test_round_trip_keeps_multi_line_descriptions_lines_starting_with_hash_and_backslashes() -> None:
    original = plan()
    original.summary = "first line\n# not a comment"
    original.tasks[0].description = "Read src/app.py\n\n# Heading in the description\n\\ a backslash line\nend"
    assert text_to_plan(plan_to_text(original), original) == original


def test_the_text_explains_the_format_and_lists_the_tasks() -> None:
    text = plan_to_text(plan())
    assert text.startswith("# paicli plan")
    assert "## <id> [<TYPE>] after: <id>, <id>" in text
    assert "summary: read the app, add the endpoint, run the tests" in text
    assert "## task_1 [FILE_READ]\nRead src/app.py\n" in text
    assert "## task_3 [COMMAND] after: task_2\nRun pytest -q\n" in text


def test_a_changed_description_applies() -> None:
    original = plan()
    edited = text_to_plan(plan_to_text(original).replace("Add GET /health", "Add GET /health and /ready"), original)
    assert edited.task("task_2").description == "Add GET /health and /ready"
    assert edited.ids() == original.ids()


def test_an_added_task_with_a_badge_type_applies() -> None:
    original = plan()
    text = plan_to_text(original) + "\n## task_4 [check] after: task_3, task_1\nCheck the endpoint answers 200\n"
    edited = text_to_plan(text, original)
    assert edited.ids() == ["task_1", "task_2", "task_3", "task_4"]
    added = edited.task("task_4")
    assert added.type is TaskType.VERIFICATION
    assert added.dependencies == ["task_3", "task_1"]
    assert added.description == "Check the endpoint answers 200"


def test_a_removed_dependency_and_a_removed_task_apply() -> None:
    original = plan()
    text = plan_to_text(original).replace("## task_2 [FILE_WRITE] after: task_1", "## task_2 [FILE_WRITE]")
    text = text.replace("## task_3 [COMMAND] after: task_2\nRun pytest -q\n", "")
    edited = text_to_plan(text, original)
    assert edited.ids() == ["task_1", "task_2"]
    assert edited.task("task_2").dependencies == []


def test_after_none_and_spaces_between_ids_are_understood() -> None:
    original = plan()
    text = plan_to_text(original).replace("[FILE_READ]", "[FILE_READ] after: none")
    text = text.replace("[COMMAND] after: task_2", "[COMMAND] after: task_2 task_1")
    edited = text_to_plan(text, original)
    assert edited.task("task_1").dependencies == []
    assert edited.task("task_3").dependencies == ["task_2", "task_1"]


def test_comment_lines_are_ignored() -> None:
    original = plan()
    text = plan_to_text(original).replace("Run pytest -q\n", "Run pytest -q\n# remember: -x would be faster\n")
    assert text_to_plan(text, original) == original


def test_a_cycle_is_reported_with_its_path() -> None:
    original = plan()
    text = plan_to_text(original).replace("## task_1 [FILE_READ]", "## task_1 [FILE_READ] after: task_3")
    with pytest.raises(PlanError, match="cycle: task_1 → task_3 → task_2 → task_1"):
        text_to_plan(text, original)


def test_an_unknown_dependency_is_named() -> None:
    original = plan()
    text = plan_to_text(original).replace("after: task_2", "after: task_9")
    with pytest.raises(PlanError, match='task "task_3" depends on "task_9", which is not a task of this plan'):
        text_to_plan(text, original)


def test_a_duplicate_id_is_named() -> None:
    original = plan()
    text = plan_to_text(original).replace("## task_3 [COMMAND]", "## task_2 [COMMAND]")
    with pytest.raises(PlanError, match='task id "task_2" is used by 2 tasks'):
        text_to_plan(text, original)


def test_an_unknown_type_names_the_line() -> None:
    original = plan()
    text = plan_to_text(original)
    line = text.splitlines().index("## task_3 [COMMAND] after: task_2") + 1
    with pytest.raises(PlanError, match=rf"line {line}: task \"task_3\" has the unknown type \[SHELL\]"):
        text_to_plan(text.replace("[COMMAND]", "[SHELL]"), original)


@pytest.mark.parametrize(
    "header, message",
    [
        ("## task_3", 'task "task_3" has no type'),
        ("## task 3 [COMMAND]", "cannot read the task header"),
        ("##", "cannot read the task header"),
    ],
)
def test_a_malformed_header_names_the_line(header: str, message: str) -> None:
    original = plan()
    text = plan_to_text(original).replace("## task_3 [COMMAND] after: task_2", header)
    with pytest.raises(PlanError, match=message) as caught:
        text_to_plan(text, original)
    assert str(caught.value).startswith("line ")


def test_text_outside_any_task_is_reported() -> None:
    original = plan()
    text = plan_to_text(original).replace("\nsummary:", "\nstray words\nsummary:")
    with pytest.raises(PlanError, match='"stray words" is outside any task'):
        text_to_plan(text, original)


def test_an_empty_description_and_an_empty_plan_are_reported() -> None:
    original = plan()
    with pytest.raises(PlanError, match='task "task_3" has an empty "description"'):
        text_to_plan(plan_to_text(original).replace("Run pytest -q", ""), original)
    with pytest.raises(PlanError, match="the plan has no tasks"):
        text_to_plan("summary: nothing\n", original)


def test_finished_tasks_of_earlier_rounds_are_comments_and_stay_as_they_were() -> None:
    original = replanned()
    text = plan_to_text(original)
    assert "## task_1" not in text and "## task_2" not in text
    assert "#   ✓ task_1 [FILE_READ] COMPLETED: Read src/app.py" in text
    assert "#   ✗ task_2 [FILE_WRITE] FAILED: Add GET /health" in text
    edited = text_to_plan(text.replace("Run pytest", "Run pytest -q"), original)
    assert edited.tasks[:2] == original.tasks[:2]  # results, usage, times: all kept
    assert edited.task("task_5").description == "Run pytest -q"
    assert edited.task("task_5").round == 2
    assert text_to_plan(text, original) == original


def test_new_tasks_may_depend_on_completed_tasks_but_not_on_failed_ones() -> None:
    original = replanned()
    text = plan_to_text(original)
    edited = text_to_plan(text.replace("after: task_4", "after: task_4, task_1"), original)
    assert edited.task("task_5").dependencies == ["task_4", "task_1"]
    with pytest.raises(PlanError, match='depends on "task_2", which is neither a task of this plan nor a completed'):
        text_to_plan(text.replace("after: task_4", "after: task_2"), original)


def test_a_new_task_cannot_take_the_id_of_a_finished_one() -> None:
    original = replanned()
    text = plan_to_text(original).replace("## task_5", "## task_1")
    with pytest.raises(PlanError, match='already used by tasks finished in an earlier round: "task_1"'):
        text_to_plan(text, original)


def test_files_and_actions_round_trip_through_the_text() -> None:
    from paicli.plan.model import TaskAction

    original = Plan(
        goal="g",
        summary="s",
        tasks=[
            Task(
                id="w",
                description="files: this line is description, not a field",
                type=TaskType.FILE_WRITE,
                files=["app.py", "tests/"],
            ),
            Task(
                id="v",
                description="run the tests",
                type=TaskType.VERIFICATION,
                dependencies=["w"],
                action=TaskAction(tool="execute_command", args={"command": "pytest -q"}),
            ),
        ],
    )
    text = plan_to_text(original)
    assert "files: app.py, tests/" in text and 'action: execute_command {"command": "pytest -q"}' in text
    back = text_to_plan(text, original)
    assert [t.spec() for t in back.tasks] == [t.spec() for t in original.tasks]


def test_a_field_with_bad_json_names_its_line() -> None:
    original = Plan(goal="g", tasks=[Task(id="a", description="d")])
    text = "summary: s\n\n## a [COMMAND]\naction: execute_command {not json\nrun it\n"
    with pytest.raises(PlanError, match="line 4: the arguments of the action are not valid JSON"):
        text_to_plan(text, original)


def test_action_arguments_nested_too_deeply_name_their_line() -> None:
    original = Plan(goal="g", tasks=[Task(id="a", description="d")])
    deep = "[" * 100_000 + "]" * 100_000
    text = f'summary: s\n\n## a [FILE_READ]\naction: read_file {{"path": {deep}}}\nread it\n'
    with pytest.raises(PlanError, match="line 4: the arguments of the action are nested more than 100 levels deep"):
        text_to_plan(text, original)
