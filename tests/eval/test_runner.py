"""`paicli eval run` over the fake model server, each agent a real `paicli` subprocess whose commands and
the hidden checks run in real bubblewrap: a right answer passes, a wrong one fails, a hanging agent hits
its time limit, a greedy one its token limit, a failing setup is an error (no agent started), plan mode
takes the plan path, and `--jobs 4` runs four at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.eval.records import RunRecord
from paicli.eval.runner import check_in_place
from tests.eval.suites import (
    ANSWER_CHECK,
    answer_task,
    eval_env,
    json_lines,
    results,
    run_eval,
    script_writer,
    write_suite,
)
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, script_summary, system_is, task_is
from tests.sandboxing import require_bwrap

CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture(autouse=True)
def sandbox_needed() -> None:
    require_bwrap()


def test_right_wrong_hanging_greedy_and_broken_tasks_get_their_outcomes(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write('[prices."fake-model"]\ninput = 1.0\noutput = 2.0\n')
    oracle = {
        "id": "oracle",
        "goal": "make add return the sum",
        "files": {"calc.py": "def add(a, b):\n    return 0\n"},
        "hidden": {"test_calc.py": CALC_TEST},
    }
    tasks = [
        oracle,
        answer_task("wrong"),
        answer_task("hang", time_limit=1.5),
        answer_task("greedy", token_limit=10),
        answer_task("broken", setup="echo installing; exit 3"),
    ]
    suite = write_suite(tmp_path / "suite", tasks, time_limit=60)
    script_writer(fake, "make add return the sum", "calc.py", "def add(a, b):\n    return a + b\n")
    script_writer(fake, "for wrong", "answer.txt", "41\n")
    fake.on("for hang", Reply.hang(), repeat=True)
    script_writer(fake, "for greedy", "answer.txt", "42\n", then=Reply.hang())
    eval_env(monkeypatch, fake, home)
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "chat", "--out", str(out), "--jobs", "4", "--json"]) == 0
    records = {r["task"]: RunRecord.model_validate(r) for r in results(out)}
    assert {task: r.outcome for task, r in records.items()} == {
        "oracle": "pass",
        "wrong": "fail",
        "hang": "timeout",
        "greedy": "over_budget",
        "broken": "error",
    }
    right = records["oracle"]
    assert right.check_exit == 0 and "1 passed" in right.check_tail
    assert right.files_changed == ("calc.py",) and right.requests == 2 and right.prompt_tokens > 0
    assert right.cost == pytest.approx((right.prompt_tokens * 1.0 + right.completion_tokens * 2.0) / 1e6, abs=1e-6)
    assert right.mode == "chat" and right.model == "fake-model" and right.paicli_version
    assert records["wrong"].check_exit == 1 and records["wrong"].files_changed == ("answer.txt",)
    assert records["hang"].error == "hit the time limit of 1.5 s" and records["hang"].check_exit is None
    assert records["greedy"].error is not None and records["greedy"].error.startswith("hit the token limit of 10")
    assert records["broken"].error == "setup exited with 3" and "installing" in records["broken"].check_tail
    assert not any("for broken" in r.text for r in fake.requests)  # no agent after a failed setup
    kept = [path.name for name in ("sessions", "checkpoints", "index") for path in (home / ".paicli" / name).glob("*")]
    assert kept == []  # what the agents kept of their temporary workspaces went with them
    events = json_lines(capsys.readouterr().out)
    assert events[0]["event"] == "eval_started" and events[0]["total"] == 5
    assert events[-1] == {**events[-1], "event": "eval_finished", "done": 5, "passed": 1, "cancelled": False}
    finished = [e["record"] for e in events if e["event"] == "eval_run_finished"]
    assert sorted(json.dumps(r, sort_keys=True) for r in finished) == sorted(
        json.dumps(r, sort_keys=True) for r in results(out)
    )


def test_plan_mode_runs_the_plan_path(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite", [answer_task("planned")])
    plan = {
        "summary": "write it",
        "tasks": [
            {"id": "task_1", "description": "write", "type": "FILE_WRITE", "dependencies": [], "files": ["answer.txt"]}
        ],
    }
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)), repeat=True)
    fake.on(all_of(task_is("task_1"), has_tool_result("write_file")), Reply.text("Done."), repeat=True)
    fake.on(
        task_is("task_1"), Reply.tool_calls([("write_file", {"path": "answer.txt", "content": "42\n"})]), repeat=True
    )
    script_summary(fake)
    eval_env(monkeypatch, fake, home)
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "plan", "--out", str(out)]) == 0
    [record] = results(out)
    assert record["outcome"] == "pass" and record["mode"] == "plan"
    assert record["requests"] == len(fake.requests) and fake.requests[0].text.startswith(PLANNER)
    progress = " ".join(capsys.readouterr().err.split())  # on stderr, wrapped at the terminal's width
    assert "paicli eval done: 1 run finished, 1 passed" in progress


def test_the_check_runs_where_the_setup_and_the_agent_ran(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a setup writes with absolute paths (an editable install's .pth, a virtual environment's scripts)
    still points at the copy when the check runs: the check runs in the agent's folder."""
    where = 'test "$(cat .setup-dir)" = "$(pwd)"'
    task = answer_task("installed", setup="pwd > .setup-dir", check=f"{where} && {ANSWER_CHECK}")
    suite = write_suite(tmp_path / "suite", [task])
    script_writer(fake, "for installed", "answer.txt", "42\n")
    eval_env(monkeypatch, fake, home)
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "chat", "--out", str(out)]) == 0
    [record] = results(out)
    assert record["outcome"] == "pass", record["check_tail"]
    assert record["files_changed"] == ["answer.txt"]  # the setup's file is not the agent's work


@pytest.mark.parametrize(
    ("base", "sandboxed", "shown", "in_place"),
    [
        ("/tmp/paicli-eval-x", True, ["/tmp", "/usr/bin", "~/.cache"], True),  # private /tmp: no agent sees it
        ("/var/tmp/paicli-eval-x", True, [], False),  # readable by other agents' commands: moved to checks/
        ("/var/tmp/paicli-eval-x", False, [], True),  # no sandbox: nothing is hidden from commands anyway
        ("/tmp/home/tmp/paicli-eval-x", True, ["/usr/bin", "/tmp/home"], False),  # a home under /tmp is shown
        ("/tmp/bin/paicli-eval-x", True, ["/tmp/bin"], False),  # so is a PATH folder
    ],
)
def test_the_check_moves_out_of_sight_only_where_other_agents_could_see_it(
    base: str, sandboxed: bool, shown: list[str], in_place: bool
) -> None:
    assert check_in_place(Path(base), sandboxed, shown) is in_place
