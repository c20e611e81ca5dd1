"""The example plans in the planner's and replanner's prompts keep the plan contract they teach."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paicli.plan.contract import Contract
from paicli.plan.model import Plan, Task
from paicli.tools.toolbox import builtin_tool

PROMPTS = Path(__file__).parents[2] / "prompts" / "modes"


def example(name: str) -> dict[str, object]:
    text = (PROMPTS / name).read_text(encoding="utf-8")
    text = re.sub(r'"description": "…"', '"description": "do it"', text)
    parsed, _ = json.JSONDecoder().raw_decode(text, text.index('{"summary"'))
    assert isinstance(parsed, dict)
    return parsed


@pytest.mark.parametrize("name", ["planner.md", "replanner.md"])
def test_the_example_plan_is_valid_under_the_contract(name: str, tmp_path: Path) -> None:
    reply = example(name)
    tasks = [Task.model_validate(task) for task in reply["tasks"]]  # type: ignore[attr-defined]
    known = {task.id for task in tasks}
    for task in tasks:
        task.dependencies = [dep for dep in task.dependencies if dep in known]  # the replanner's refer back
    (tmp_path / "src").mkdir()
    assert Contract(tmp_path, builtin_tool).problems(Plan(goal="g", summary="s", tasks=tasks)) == []
    assert any(task.action is not None for task in tasks)
    assert any(task.files for task in tasks)
