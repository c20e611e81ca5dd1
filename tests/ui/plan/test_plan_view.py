"""The static plan view: levels, badges, dependencies, the summary line, folding, narrow terminals."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.ui.plan.plan_view import render_plan

LONG = "Read src/app.py and every module it imports, " + " ".join(f"note{n}" for n in range(30)) + " FINAL_WORD"


def diamond() -> Plan:
    return Plan(
        goal="ship it",
        summary="read, change two files, test",
        tasks=[
            Task(id="read", description=LONG, type=TaskType.FILE_READ),
            Task(id="edit_a", description="edit a.py", type=TaskType.FILE_WRITE, dependencies=["read"]),
            Task(id="edit_b", description="edit b.py", type=TaskType.FILE_WRITE, dependencies=["read"]),
            Task(id="run", description="pytest -q", type=TaskType.COMMAND, dependencies=["edit_a"]),
            Task(id="think", description="weigh it", type=TaskType.ANALYSIS, dependencies=["edit_b"]),
            Task(id="check", description="all green", type=TaskType.VERIFICATION, dependencies=["run", "think"]),
        ],
    )


def shown(plan: Plan, width: int = 100, *, expanded: bool = False) -> str:
    out = io.StringIO()
    Console(file=out, width=width).print(render_plan(plan, expanded=expanded))
    return out.getvalue()


def lines_with(text: str, fragment: str) -> list[str]:
    return [line for line in text.splitlines() if fragment in line]


def test_tasks_are_grouped_by_level_and_parallel_levels_say_so() -> None:
    text = shown(diamond())
    fragments = ("Level 1\n", "○ read", "Level 2", "○ edit_a", "Level 3", "○ run", "Level 4")
    order = [text.index(fragment) for fragment in fragments]
    assert order == sorted(order)
    assert "Level 2 · runs in parallel (2 tasks)" in text
    assert "Level 3 · runs in parallel (2 tasks)" in text
    assert "Level 4 · runs" not in text
    assert text.index("check") > text.index("Level 4")


def test_each_task_shows_its_badge_and_dependencies() -> None:
    text = shown(diamond())
    assert lines_with(text, "○ read READ")
    assert lines_with(text, "○ edit_a WRITE after read")
    assert lines_with(text, "○ run CMD after edit_a")
    assert lines_with(text, "○ think THINK after edit_b")
    assert lines_with(text, "○ check CHECK after run, think")


def test_the_summary_line_counts_tasks_levels_and_the_critical_path() -> None:
    text = shown(diamond())
    assert "read, change two files, test" in text
    assert "6 tasks · 4 levels · critical path 4 tasks" in text
    expanded = shown(diamond(), expanded=True)
    assert "critical path 4 tasks (read → edit_a → run → check)" in expanded


def test_long_descriptions_fold_to_one_line_unless_expanded() -> None:
    folded = shown(diamond())
    assert "FINAL_WORD" not in folded
    (line,) = lines_with(folded, "Read src/app.py")
    assert line.rstrip().endswith("…")
    expanded = shown(diamond(), expanded=True)
    assert "FINAL_WORD" in expanded
    assert len(lines_with(expanded, "note")) > 1  # wrapped over several lines


def test_a_multi_line_description_folds_to_one_line() -> None:
    plan = Plan(goal="g", tasks=[Task(id="t", description="first\nsecond\n\nthird")])
    assert lines_with(shown(plan), "first second third")
    assert [line.strip() for line in shown(plan, expanded=True).splitlines()][-4:] == ["first", "second", "", "third"]


@pytest.mark.parametrize("expanded", [False, True])
def test_a_40_column_terminal_keeps_every_id_and_no_line_is_wider(expanded: bool) -> None:
    plan = diamond()
    plan.tasks.append(
        Task(
            id="a_rather_long_task_identifier_1",
            description="x",
            type=TaskType.VERIFICATION,
            dependencies=["check", "edit_b", "edit_a"],
        )
    )
    text = shown(plan, width=40, expanded=expanded)
    assert all(len(line) <= 40 for line in text.splitlines())
    for task in plan.tasks:
        assert task.id in text
    assert "CHECK" in text and "after check, edit_b, edit_a" in text.replace("\n", " ").replace("  ", " ")


def test_status_icons_and_earlier_rounds() -> None:
    plan = Plan(
        goal="g",
        summary="second try",
        round=2,
        tasks=[
            Task(id="task_1", description="read", type=TaskType.FILE_READ, status=TaskStatus.COMPLETED),
            Task(id="task_2", description="write", type=TaskType.FILE_WRITE, status=TaskStatus.FAILED),
            Task(id="task_3", description="test", type=TaskType.COMMAND, status=TaskStatus.SKIPPED),
            Task(id="task_4", description="write again", dependencies=["task_1"], round=2),
            Task(id="task_5", description="test again", dependencies=["task_4"], round=2, status=TaskStatus.RUNNING),
        ],
    )
    plan.tasks[1].error = "the tests failed:\nTraceback (most recent call last):\n  File x.py, line 1\nAssertionError"
    plan.tasks[2].error = "skipped: task_2 failed"
    text = shown(plan)
    assert "Plan · round 2" in text
    assert "2 tasks · 2 levels · critical path 2 tasks · 1 done earlier · 2 failed or skipped earlier" in text
    done, failed = text.index("Done in earlier rounds"), text.index("Failed or skipped in earlier rounds")
    assert (
        done < text.index("✓ task_1") < failed < text.index("✗ task_2") < text.index("↷ task_3") < text.index("Level 1")
    )
    assert lines_with(text, "  ✗ task_2 WRITE: the tests failed:") and "Traceback" not in text  # one row each
    assert lines_with(text, "  ↷ task_3 CMD: skipped: task_2 failed")
    assert lines_with(text, "○ task_4 THINK after task_1")
    assert lines_with(text, "● task_5")


def test_untrusted_text_is_not_markup_and_loses_control_characters() -> None:
    plan = Plan(
        goal="g",
        summary="[bold red]not markup[/]",
        tasks=[Task(id="t[1]", description="evil \x1b[31mred\x1b[0m [link=x]y[/link]")],
    )
    out = io.StringIO()
    Console(file=out, width=100, force_terminal=True).print(render_plan(plan))
    text = out.getvalue()
    assert "[bold red]not markup[/]" in text
    assert "[link=x]y[/link]" in text
    assert "\x1b[31mred" not in text
    assert "t[1]" in text


def test_a_plan_with_a_cycle_is_still_shown() -> None:
    plan = Plan(
        goal="g",
        tasks=[Task(id="a", description="x", dependencies=["b"]), Task(id="b", description="y", dependencies=["a"])],
    )
    text = shown(plan)
    assert "dependencies form a cycle" in text
    assert lines_with(text, "○ a THINK after b") and lines_with(text, "○ b THINK after a")
