"""One normalisation and one validator for every route a plan comes by (issue 29, finding 3).

The same hostile plans (two writers of one path, spelled differently, with no dependency between them)
go through a planner reply, a replan, a `--from` file, an `e` edit and a saved plan on `--resume`; each
route refuses them with the same line, and a plan that passes runs with its paths in the one normal form.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from paicli.plan.contract import Contract
from paicli.plan.model import Plan, PlanStatus, Task, TaskType
from paicli.plan.saved_plans import PlanRecord, PlanStore, render_markdown
from paicli.tools.toolbox import builtin_tool
from paicli.ui.plan.plan_editor import plan_to_text, text_to_plan
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, message_text
from tests.plan_script import PLANNER, REPLANNER, script_summary, system_is

# (first task's files, second task's files, the path the problem names)
SPELLINGS = {
    "./": (["a.txt"], ["./a.txt"], "a.txt"),
    "..": (["sub/../a.txt"], ["a.txt"], "a.txt"),
    "double slash": (["sub//x.txt"], ["sub/x.txt"], "sub/x.txt"),
    "./ and /./": (["./sub/./x.txt"], ["sub/x.txt"], "sub/x.txt"),
    "a folder and a file in it": (["./sub/"], ["sub/x.txt"], "sub/x.txt"),
    "nested folders": (["sub/deeper/"], ["./sub/deeper/../deeper/y/z.txt"], "sub/deeper/y/z.txt"),
    "the whole workspace": (["."], ["sub/x.txt"], "sub/x.txt"),
}
GOOD = {
    "summary": "read",
    "tasks": [
        {
            "id": "r",
            "description": "read",
            "type": "FILE_READ",
            "action": {"tool": "read_file", "args": {"path": "a.txt"}},
        }
    ],
}


def problem_line(path: str) -> str:
    return f'tasks "t1" and "t2" both change {path} and neither depends on the other'


def hostile(case: str) -> dict[str, Any]:
    first, second, _ = SPELLINGS[case]
    return {
        "summary": "hostile",
        "tasks": [
            {"id": "t1", "description": "write", "type": "FILE_WRITE", "files": first},
            {"id": "t2", "description": "write", "type": "COMMAND", "files": second},
        ],
    }


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "sub" / "deeper").mkdir(parents=True)
    (workspace / "sub" / "x.txt").write_text("x\n")
    return workspace


def plan_args(workspace: Path, *extra: str) -> list[str]:
    return ["-C", str(workspace), "plan", *extra, "--yes", "--json", "--no-review"]


@pytest.mark.parametrize("case", list(SPELLINGS))
def test_a_planner_reply_is_reasked(fake: FakeLLM, project: Path, home: Path, case: str) -> None:
    fake.on(system_is(PLANNER), Reply.text(json.dumps(hostile(case))), Reply.text(json.dumps(GOOD)))
    script_summary(fake)
    done = run_paicli(plan_args(project, "change things"), paicli_env(fake, home))
    assert done.code == 0, done.stderr
    reasked = [r.body for r in fake.requests if r.body is not None and system_is(PLANNER)(r.body)][1]
    assert problem_line(SPELLINGS[case][2]) in message_text(reasked["messages"][-1])


@pytest.mark.parametrize("case", ["./", "a folder and a file in it"])
def test_a_replan_is_reasked(fake: FakeLLM, project: Path, home: Path, case: str) -> None:
    failing = {
        "summary": "fail",
        "tasks": [
            {
                "id": "f",
                "description": "fail",
                "type": "COMMAND",
                "action": {"tool": "execute_command", "args": {"command": "exit 3"}},
            }
        ],
    }
    fake.on(system_is(PLANNER), Reply.text(json.dumps(failing)))
    fake.on(system_is(REPLANNER), Reply.text(json.dumps(hostile(case))), Reply.text(json.dumps(GOOD)))
    script_summary(fake)
    done = run_paicli(plan_args(project, "change things"), paicli_env(fake, home))
    assert done.code == 0, done.stderr
    replans = [r.body for r in fake.requests if r.body is not None and system_is(REPLANNER)(r.body)]
    assert problem_line(SPELLINGS[case][2]) in message_text(replans[1]["messages"][-1])


@pytest.mark.parametrize("case", list(SPELLINGS))
def test_a_from_file_is_refused(fake: FakeLLM, project: Path, home: Path, tmp_path: Path, case: str) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(hostile(case)))
    done = run_paicli(plan_args(project, "--from", str(plan_file)), paicli_env(fake, home))
    assert done.code == 2
    assert problem_line(SPELLINGS[case][2]) in done.stderr
    assert fake.requests == []


def saved(workspace: Path, plan: Plan, plan_id: str = "hostile-plan") -> str:
    now = time.time()
    record = PlanRecord(id=plan_id, created_at=now, updated_at=now, plan=plan)
    PlanStore(workspace).write(plan_id, record.model_dump_json(), render_markdown(record))
    return plan_id


def as_plan(case: str) -> Plan:
    raw = hostile(case)
    tasks = [
        Task(id=t["id"], description=t["description"], type=TaskType(t["type"]), files=t["files"]) for t in raw["tasks"]
    ]
    return Plan(goal="change things", tasks=tasks, status=PlanStatus.FAILED)


@pytest.mark.parametrize("case", list(SPELLINGS))
def test_a_saved_plan_on_resume_is_refused(fake: FakeLLM, project: Path, home: Path, case: str) -> None:
    plan_id = saved(project, as_plan(case))
    done = run_paicli(plan_args(project, "--resume", plan_id), paicli_env(fake, home))
    assert done.code == 2, done.stdout
    assert problem_line(SPELLINGS[case][2]) in done.stderr
    assert fake.requests == []
    assert (project / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("case", list(SPELLINGS))
def test_an_edit_is_refused(project: Path, case: str) -> None:
    original = Plan(goal="change things", tasks=[Task(id="r", description="read", type=TaskType.FILE_READ)])
    edited = text_to_plan(plan_to_text(as_plan(case)), original)
    # the editor's check (paicli/ui/plan/plan_runner.py: plan_facts) is the contract's, as for the others
    problems = Contract(project, builtin_tool).problems(edited, require_files=False)
    assert any(problem_line(SPELLINGS[case][2]) in problem for problem in problems)


def test_a_plan_that_passes_holds_its_paths_in_the_normal_form(project: Path) -> None:
    plan = as_plan("./")
    plan.tasks[1].dependencies = ["t1"]
    plan.tasks[0].files = ["./sub/./x.txt"]
    plan.tasks[1].files = ["sub//deeper/../x.txt"]
    assert Contract(project, builtin_tool).problems(plan) == []
    assert [task.files for task in plan.tasks] == [["sub/x.txt"], ["sub/x.txt"]]
