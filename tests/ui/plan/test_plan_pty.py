"""Plan mode in the REPL, through a real pseudo-terminal: /plan, review, execution, ESC at any moment."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.plan_script import PLANNER, plan_json, requests_of, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"


def saved_status(workspace: Path) -> str:
    (path,) = (workspace / ".paicli" / "plans").glob("*.json")
    return json.loads(path.read_text())["plan"]["status"]


def test_plan_review_approve_runs_the_tasks_and_shows_the_summary(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"scan": [], "report": ["scan"]}, summary="scan then report")))
    fake.on(task_is("scan"), Reply.text("found 2 modules"))
    fake.on(task_is("report"), Reply.text("report written"))
    script_summary(fake, "The repository has two modules.")
    child = spawn_repl("--no-review")
    child.send("/plan describe the repo" + ENTER)
    expect_text(child, "scan then report")
    expect_text(child, "Enter")  # the key hint of the review screen
    child.send(ENTER)
    expect_text(child, "The repository has two modules.", timeout=20)
    child.expect_exact(PROMPT, timeout=10)
    assert saved_status(workspace) == "COMPLETED"
    assert "found 2 modules" in requests_of(fake, "report")[0].text


def test_plan_alone_plans_the_next_message(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"only": []}, summary="one step")))
    fake.on(task_is("only"), Reply.text("did it"))
    script_summary(fake, "Done in one step.")
    child = spawn_repl("--no-review")
    child.send("/plan" + ENTER)
    expect_text(child, "next message will be planned")
    child.send("tidy the readme" + ENTER)
    expect_text(child, "one step")
    child.send(ENTER)
    expect_text(child, "Done in one step.", timeout=20)
    planner_request = next(r for r in fake.requests if r.body and system_is(PLANNER)(r.body))
    assert "tidy the readme" in planner_request.text


def test_esc_during_planning_closes_the_request_and_returns_to_the_prompt(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.hang())
    child = spawn_repl("--no-review")
    child.send("/plan something big" + ENTER)
    request = fake.wait_for_requests(1, timeout=10)[0]
    child.send(ESC)
    expect_text(child, "cancelled", timeout=5)
    child.expect_exact(PROMPT, timeout=5)
    assert "resume" not in child.before  # nothing was saved: nothing to resume
    assert request.wait_finished(5) and request.disconnected
    assert not (workspace / ".paicli" / "plans").exists() or not list((workspace / ".paicli" / "plans").glob("*.json"))


def test_esc_in_review_cancels_the_plan(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []}, summary="a plan to refuse")))
    child = spawn_repl("--no-review")
    child.send("/plan whatever" + ENTER)
    expect_text(child, "a plan to refuse")
    expect_text(child, "Enter")
    child.send(ESC)
    expect_text(child, "plan cancelled")
    child.expect_exact(PROMPT, timeout=5)
    assert "/plan resume" not in child.before  # nothing ran, nothing was kept to resume
    assert not [r for r in fake.requests if r.body and task_is("a")(r.body)]
    assert list((workspace / ".paicli" / "plans").glob("*.json")) == []


def test_esc_while_a_task_runs_a_command_kills_it_and_cancels_the_plan(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    marker = "30.4242"
    fake.on(system_is(PLANNER), Reply.text(plan_json({"wait": []}, summary="wait for it", types={"wait": "COMMAND"})))
    fake.on(has_tool_result("execute_command"), Reply.text("waited"))
    fake.on(task_is("wait"), Reply.tool_calls([("execute_command", {"command": f"sleep {marker} & sleep {marker}"})]))
    child = spawn_repl("--no-review", "--approval", "yolo")
    child.send("/plan wait a while" + ENTER)
    expect_text(child, "wait for it")
    expect_text(child, "Enter")
    child.send(ENTER)
    deadline = time.monotonic() + 15
    while subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    sent = time.monotonic()
    child.send(ESC)
    child.expect_exact(PROMPT, timeout=5)
    assert time.monotonic() - sent < 5
    time.sleep(0.2)
    assert subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True).returncode == 1
    assert saved_status(workspace) == "CANCELLED"


def test_a_cancelled_plan_resumes_without_rerunning_completed_tasks(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"first": [], "second": ["first"]}, summary="two steps")))
    fake.on(task_is("first"), Reply.text("FIRST-DONE"))
    fake.on(task_is("second"), Reply.hang())
    fake.on(task_is("second"), Reply.text("second done"))  # served once the hang above is used up
    script_summary(fake, "Both steps done.")
    child = spawn_repl("--no-review")
    child.send("/plan do two steps" + ENTER)
    expect_text(child, "two steps")
    expect_text(child, "Enter")
    child.send(ENTER)
    fake.wait_for_requests(3, timeout=15)
    child.send(ESC)
    expect_text(child, "/plan resume", timeout=5)
    child.expect_exact(PROMPT, timeout=5)
    assert saved_status(workspace) == "CANCELLED"
    child.send("/plan resume" + ENTER)
    expect_text(child, "Enter")
    child.send(ENTER)
    expect_text(child, "Both steps done.", timeout=20)
    child.expect_exact(PROMPT, timeout=10)
    assert len(requests_of(fake, "first")) == 1
    assert "FIRST-DONE" in requests_of(fake, "second")[-1].text
    assert saved_status(workspace) == "COMPLETED"
