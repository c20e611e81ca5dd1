"""Approvals in the REPL through a real pseudo-terminal: the question appears, y runs, n refuses with a
reason the model gets, and a plan's task asks with the live view paused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, has_tool_result, last_message_contains
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text
from tests.ui.terminal import Start

pytestmark = pytest.mark.pty

ENTER = "\r"


def tool_results(fake: FakeLLM) -> list[str]:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "tool"]


def test_yes_runs_the_command_and_no_sends_the_reason_to_the_model(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    # `rm` destroys work: it asks in `ask` mode whether or not commands run in the sandbox
    for name in ("first.txt", "second.txt"):
        (workspace / name).write_text("x\n")
    fake.on(lambda body: body["messages"][-1]["role"] == "tool", Reply.text("Done with that."), repeat=True)
    fake.on(last_message_contains("drop one"), Reply.tool_calls([("execute_command", {"command": "rm first.txt"})]))
    fake.on(last_message_contains("drop two"), Reply.tool_calls([("execute_command", {"command": "rm second.txt"})]))
    child = spawn_repl()
    child.send("drop one" + ENTER)
    expect_text(child, "approve execute_command")
    expect_text(child, "rm first.txt")
    child.send("y")
    expect_text(child, "Done with that.")
    child.expect_exact(PROMPT)
    assert not (workspace / "first.txt").exists()
    child.send("drop two" + ENTER)
    expect_text(child, "approve execute_command")
    child.send("n")
    expect_text(child, "reason for the model")
    child.send("not in this folder" + ENTER)
    expect_text(child, "Done with that.")
    assert (workspace / "second.txt").exists()
    assert "not in this folder" in tool_results(fake)[-1]


def test_a_plan_task_asks_with_the_live_view_paused(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    plan = json.loads(plan_json({"build": []}, summary="build the thing", types={"build": "COMMAND"}))
    # a command task writes only what it declares (issue 29); removing a file needs its folder declared:
    # a file bound alone is a mount point, which cannot be unlinked or renamed over
    plan["tasks"][0]["files"] = ["build/"]
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    fake.on(has_tool_result("execute_command"), Reply.text("built"))
    fake.on(task_is("build"), Reply.tool_calls([("execute_command", {"command": "rm build/stale.txt"})]))
    script_summary(fake, "The thing is built.")
    (workspace / "build").mkdir()
    (workspace / "build" / "stale.txt").write_text("old\n")
    child = spawn_repl("--no-review")
    child.send("/plan build it" + ENTER)
    expect_text(child, "build the thing")
    expect_text(child, "Enter")
    child.send(ENTER)
    expect_text(child, "approve execute_command · task build", timeout=15)
    child.send("y")
    expect_text(child, "The thing is built.", timeout=15)
    child.expect_exact(PROMPT)
    assert not (workspace / "build" / "stale.txt").exists()


def test_a_long_command_is_paged_and_yes_waits_for_its_last_page(
    terminal: Start, fake: FakeLLM, workspace: Path
) -> None:
    """Finding 4 of issue 31: a long first line and 40 newlines once pushed the payload out of the box."""
    (workspace / "victim.txt").write_text("x\n")
    command = "# run the unit tests" + " ." * 1500 + "\n" * 40 + "rm victim.txt"
    fake.on(lambda body: body["messages"][-1]["role"] == "tool", Reply.text("Done with that."), repeat=True)
    fake.on(last_message_contains("tests please"), Reply.tool_calls([("execute_command", {"command": command})]))
    term = terminal(rows=30, columns=100)
    term.send("tests please" + ENTER)
    term.wait_for("41 lines, 3,073 characters")
    term.wait_for("space/↓: next page")
    term.send("y")
    term.wait_for("y/a once you have seen the last page")
    assert (workspace / "victim.txt").exists() and "41 rm victim.txt" not in term.text
    for _ in range(12):
        term.send(" ")
        term.pump(0.1)
    term.wait_for("41 rm victim.txt")
    term.send("y")
    term.wait_for("Done with that.")
    assert not (workspace / "victim.txt").exists()
