"""A lone surrogate (JSON `"\\ud800"`) from outside never crashes a run: it becomes U+FFFD where it enters.

Every field that carries text from a model, a file or a saved record is given one, through the real CLI
against the fake server; the run ends normally, every event is valid UTF-8 JSON, and a saved plan is not
left RUNNING.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from paicli.app.sessions import sessions_folder
from paicli.common.sanitize import well_formed, well_formed_json
from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, REVIEWER, plan_json, script_summary, system_is, task_is

LONE = "\ud800"
BAD = f"odd{LONE}text"  # what the model or the file says
SHOWN = "odd\ufffdtext"  # what paicli keeps of it

Scenario = Callable[[FakeLLM, Path, Path], list[str]]


def _plan(goal: str = "do it", *extra: str) -> list[str]:
    return ["plan", goal, "--yes", "--json", *extra]


def planner_summary(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []}, summary=BAD)))
    fake.on(task_is("a"), Reply.text("fine"))
    script_summary(fake)
    return _plan()


def task_description(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    plan = {"summary": "s", "tasks": [{"id": "a", "description": BAD, "type": "ANALYSIS", "dependencies": []}]}
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    fake.on(task_is("a"), Reply.text("fine"))
    script_summary(fake)
    return _plan()


def task_answer(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.text(BAD))
    fake.on(task_is("b"), Reply.text("fine"))
    script_summary(fake)
    return _plan()


def task_reasoning(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("fine", reasoning=BAD))
    script_summary(fake)
    return _plan()


def final_summary(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("fine"))
    script_summary(fake, BAD)
    return _plan()


def reviewer_reflection(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = true\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("fine"))
    fake.on(system_is(REVIEWER), Reply.text(json.dumps({"score": 9, "reflection": BAD})))
    script_summary(fake)
    return _plan()


def _writer(fake: FakeLLM, args: dict[str, str] | str) -> None:
    plan = {
        "summary": "s",
        "tasks": [{"id": "w", "description": "write", "type": "FILE_WRITE", "dependencies": [], "files": ["out.txt"]}],
    }
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    fake.on(task_is("w"), Reply.tool_calls([("write_file", args)]), Reply.text("written"))
    script_summary(fake)


def tool_arguments_escaped(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    _writer(fake, {"path": "out.txt", "content": BAD})  # `\\ud800` inside the arguments' own JSON
    return _plan()


def tool_arguments_raw(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    _writer(fake, '{"path": "out.txt", "content": "' + BAD + '"}')  # a surrogate in the stream's JSON
    return _plan()


def from_file(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    plan = {"goal": BAD, "summary": BAD, "tasks": [{"id": "a", "description": BAD, "type": "ANALYSIS"}]}
    (workspace / "plan.json").write_text(json.dumps(plan))
    fake.on(task_is("a"), Reply.text("fine"))
    script_summary(fake)
    return ["plan", "--from", str(workspace / "plan.json"), "--yes", "--json"]


def saved_plan(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.text("A-RESULT"))
    fake.on(task_is("b"), Reply.error(500, "down"), Reply.error(500, "down"), Reply.error(500, "down"))
    fake.on(task_is("b"), Reply.text("fine"), repeat=True)
    script_summary(fake)
    first = run_paicli(["-C", str(workspace), *_plan("do it", "--max-replans", "0")], paicli_env(fake, home))
    assert first.code == 1, first.stderr
    [path] = (workspace / ".paicli" / "plans").glob("*.json")
    path.write_text(path.read_text().replace("A-RESULT", "A-RESULT \\ud800 \\udfff"))
    return ["plan", "--resume", path.stem, "--yes", "--json"]


def run_answer(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on("question", Reply.text(BAD))
    return ["run", "question", "--json"]


def session_file(fake: FakeLLM, workspace: Path, home: Path) -> list[str]:
    fake.on("first", Reply.text("MARK-ANSWER"))
    fake.on("second", Reply.text("fine"))
    assert run_paicli(["-C", str(workspace), "run", "first"], paicli_env(fake, home)).code == 0
    [path] = sessions_folder(home, workspace).glob("*")
    path.write_text(path.read_text().replace("MARK-ANSWER", "MARK-ANSWER \\ud800"))
    return ["run", "second", "--json", "-c"]


SCENARIOS: list[Scenario] = [
    planner_summary,
    task_description,
    task_answer,
    task_reasoning,
    final_summary,
    reviewer_reflection,
    tool_arguments_escaped,
    tool_arguments_raw,
    from_file,
    saved_plan,
    run_answer,
    session_file,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_a_lone_surrogate_from_outside_becomes_a_replacement_character(
    scenario: Scenario, fake: FakeLLM, workspace: Path, home: Path
) -> None:
    args = scenario(fake, workspace, home)
    done: Finished = run_paicli(["-C", str(workspace), *args], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr and "surrogates not allowed" not in done.stderr
    events = done.events()
    assert json.dumps(events, ensure_ascii=False).encode("utf-8")  # no lone surrogate reached an event
    assert "\\ud8" not in done.stdout.lower() and "\\udf" not in done.stdout.lower()
    if args[0] == "plan":
        assert [e["status"] for e in done.of("plan_finished")] == ["COMPLETED"]
        for saved in (workspace / ".paicli" / "plans").glob("*.json"):
            assert json.loads(saved.read_text())["plan"]["status"] == "COMPLETED"
    else:
        assert len(done.of("run_finished")) == 1
    if scenario in (tool_arguments_escaped, tool_arguments_raw):
        assert [e["status"] for e in done.of("task_finished")] == ["COMPLETED"]
        assert (workspace / "out.txt").read_text(encoding="utf-8") == SHOWN
    if scenario in (planner_summary, task_answer, final_summary, reviewer_reflection, run_answer):
        assert SHOWN in done.stdout


def test_well_formed_keeps_pairs_and_replaces_only_lone_halves() -> None:
    assert well_formed("a\ud83d\ude00b") == "a\ufffd\ufffdb"  # two halves in a str are not a pair: both lone
    assert well_formed("a\U0001f600b\udc00") == "a\U0001f600b\ufffd"
    decoded = json.loads('{"k\\ud800": ["\\udfff", {"x": "\\ud83d\\ude00"}], "n": 1}')
    assert well_formed_json(decoded) == {"k\ufffd": ["\ufffd", {"x": "\U0001f600"}], "n": 1}


def test_an_mcp_message_with_a_lone_surrogate_is_read_with_a_replacement_character() -> None:
    pytest.importorskip("mcp")
    from mcp.types import CallToolResult

    from paicli.mcp.stdio import _message
    from paicli.mcp.tool import render_result

    line = b'{"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "odd\\ud800text"}]}}'
    message = _message(line)
    assert not isinstance(message, Exception), message
    result = CallToolResult.model_validate(message.message.model_dump(by_alias=True)["result"])
    assert render_result(result) == SHOWN
    assert isinstance(_message(b"not json \\ud800"), Exception)  # still refused as what it is
