"""A resize while the plan's live view runs, through a terminal emulator that reflows lines as most
terminals do: the table is redrawn once, at the new width, with no garbled copy left above it."""

from __future__ import annotations

import json

import pytest

from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, system_is, task_is
from tests.ui.terminal import Start, Terminal

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"
TASKS = ["alpha", "bravo", "charlie"]
PATTERN = "src/**/*_module_with_a_rather_long_name_that_fills_a_row_of_the_table.py"


def long_plan() -> str:
    words = "read every module of the package and write down what each of its public functions does"
    tasks = [
        {"id": f"task_{name}", "description": f"{name}: {words}", "type": "ANALYSIS", "dependencies": []}
        for name in TASKS
    ]
    return json.dumps({"summary": "three long tasks", "tasks": tasks})


def rows_naming(term: Terminal, text: str) -> int:
    return sum(text in line for line in term.lines)


def test_shrinking_the_terminal_during_a_plan_redraws_the_table_cleanly(fake: FakeLLM, terminal: Start) -> None:
    fake.on(system_is(PLANNER), Reply.text(long_plan()))
    for name in TASKS:
        fake.on(all_of(task_is(f"task_{name}"), has_tool_result("glob_files")), Reply.hang())
        fake.on(task_is(f"task_{name}"), Reply.tool_calls([("glob_files", {"pattern": PATTERN})]))
    term = terminal("--no-review", rows=30, columns=120)
    term.send("/plan study the package" + ENTER)
    term.wait_for("Enter")
    term.send(ENTER)
    term.wait_for(lambda t: rows_naming(t, "_module_with_a_rather_long") == 3, timeout=20)
    assert max(len(line) for line in term.lines) > 60  # table lines the narrower screen must wrap
    term.resize(30, 60)
    term.wait_for(lambda t: t.screen.columns == 60 and max(len(line) for line in t.lines) <= 60)
    term.pump(1.0)  # a few redraws at the new width
    assert rows_naming(term, "Running plan") == 1, term.text
    for name in TASKS:
        assert rows_naming(term, f"● task_{name}") == 1, term.text
    term.send(ESC)
    term.wait_for("plan cancelled", timeout=15)
