"""`paicli plan GOAL` on a terminal without --yes: the review screen, the live view, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.conftest import paicli_pty
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.ui.conftest import REPO, expect_text, pty_env

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"


def spawn_plan(fake: FakeLLM, workspace: Path, home: Path, *args: str) -> pexpect.spawn:
    return paicli_pty(
        ["-C", str(workspace), "plan", *args],
        cwd=str(REPO),
        env=pty_env(fake, home),
        encoding="utf-8",
        codec_errors="replace",
        timeout=15,
        dimensions=(40, 120),
    )


def test_review_then_run_exits_0(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"look": []}, summary="look around")))
    fake.on(task_is("look"), Reply.text("looked"))
    script_summary(fake, "Looked around.")
    child = spawn_plan(fake, workspace, home, "look around", "--no-review")
    expect_text(child, "look around")
    expect_text(child, "Enter")
    child.send(ENTER)
    expect_text(child, "Looked around.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_esc_in_review_exits_130(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"look": []}, summary="a plan to refuse")))
    child = spawn_plan(fake, workspace, home, "anything", "--no-review")
    expect_text(child, "a plan to refuse")
    expect_text(child, "Enter")
    child.send(ESC)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert not [r for r in fake.requests if r.body and task_is("look")(r.body)]


def test_json_mode_keeps_stdout_for_events_and_draws_the_review_on_stderr(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"look": []}, summary="json and a screen")))
    fake.on(task_is("look"), Reply.text("looked"))
    script_summary(fake)
    events = tmp_path / "events.jsonl"
    command = f"{sys.executable} -m paicli -C {workspace} plan 'look' --no-review --json > {events}"
    child = pexpect.spawn(
        "bash",
        ["-c", command],
        cwd=str(REPO),
        encoding="utf-8",
        timeout=15,
        dimensions=(40, 120),
        env=pty_env(fake, home),
    )
    expect_text(child, "json and a screen")
    expect_text(child, "Enter")
    child.send(ENTER)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert "plan_approved" in kinds and kinds[-1] == "plan_finished"
