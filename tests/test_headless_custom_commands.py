"""`paicli run /NAME ARGS` (issue 35): a custom command headless, over the fake server, in process (the
command line's own `main`, with the environment a shell would give it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.cli import main
from tests.conftest import paicli_env
from tests.fakellm import FakeLLM, Reply, has_tool_result, no_tools


@pytest.fixture
def env(fake: FakeLLM, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in paicli_env(fake, home).items():
        monkeypatch.setenv(name, value)


def command(home: Path, relative: str, text: str) -> None:
    path = home / ".paicli" / "commands" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.usefixtures("env")
def test_run_sends_the_filled_in_prompt_with_only_the_allowed_tools(
    fake: FakeLLM, workspace: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command(home, "frontend/review.md", "---\nallowed-tools: read_file, grep_code\n---\nReview $1 ($ARGUMENTS).")
    (workspace / "a b.py").write_text("x = 1\n")
    fake.on(has_tool_result("read_file"), Reply.text("Looks fine."))
    fake.on("Review a b.py", Reply.tool_calls([("read_file", {"path": "a b.py"})]))
    # the name and its arguments as separate words, or as one PROMPT (arguments starting with a dash)
    code = main(["-C", str(workspace), "run", "/frontend:review", "a b.py", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    first = fake.requests[0]
    assert first.messages[-1]["content"] == "Review a b.py ('a b.py')."
    assert [tool["function"]["name"] for tool in first.body["tools"]] == ["read_file", "grep_code"]
    assert events(out)[-1]["event"] == "run_finished" and events(out)[-1]["content"] == "Looks fine."
    fake.on("Review b.py", Reply.text("Strictly fine."))
    assert main(["-C", str(workspace), "run", "/frontend:review b.py --strict"]) == 0
    assert fake.requests[-1].messages[-1]["content"] == "Review b.py (b.py --strict)."
    assert capsys.readouterr().out == "Strictly fine.\n"


@pytest.mark.usefixtures("env")
def test_a_command_that_plans_runs_as_an_approved_plan(
    fake: FakeLLM, workspace: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command(home, "notes.md", "---\nplan: true\n---\nWrite the release notes for $1.")
    plan = {
        "summary": "notes",
        "tasks": [{"id": "t1", "description": "say done", "type": "ANALYSIS", "dependencies": []}],
    }
    fake.on(no_tools, Reply.text(json.dumps(plan)), Reply.text("Notes written."), repeat=True)
    fake.on("say done", Reply.text("done"))
    code = main(["-C", str(workspace), "run", "/notes", "v2", "--json"])
    kinds = [event["event"] for event in events(capsys.readouterr().out)]
    assert code == 0, kinds
    assert "Write the release notes for v2." in fake.requests[0].text
    assert "plan_created" in kinds and kinds[-1] == "plan_finished"


@pytest.mark.usefixtures("env")
def test_an_unknown_command_is_a_usage_error_before_any_request(
    fake: FakeLLM, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(workspace), "run", "/nothing", "here"]) == 2
    assert "unknown command /nothing" in capsys.readouterr().err and fake.requests == []
    assert main(["-C", str(workspace), "run", "two", "words"]) == 2
    assert "paicli run takes one PROMPT" in capsys.readouterr().err
