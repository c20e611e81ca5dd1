"""The review screen opens when planning starts and fills as the planner's reply streams (issue 33), in the
REPL through a real pseudo-terminal: one spawn, a plan streamed slowly by the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
TASKS = {"first": [], "second": ["first"], "third": ["second"]}


def test_the_review_fills_as_the_plan_streams_and_enter_approves_only_the_whole_plan(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    reply = plan_json(TASKS, summary="three steps in a row")
    # about 45 chunks a tenth of a second apart: the first task's object is complete after about 1.5 s,
    # the whole reply after about 4.5 s
    fake.on(system_is(PLANNER), Reply.text(reply, chunk=6, chunk_delay=0.1))
    for task_id in TASKS:
        fake.on(task_is(task_id), Reply.text(f"{task_id} done"))
    script_summary(fake, "All three steps are done.")
    child = spawn_repl("--no-review")
    child.send("/plan do three steps" + ENTER)
    expect_text(child, "Planning…", timeout=10)
    expect_text(child, "do first", timeout=10)  # task 1, drawn by the review screen while the reply streams
    (planner,) = [r for r in fake.requests if r.body and system_is(PLANNER)(r.body)]
    assert not planner.done.is_set(), "the reply was already complete: the test proves nothing"
    child.send(ENTER)  # before the end: said, not acted on
    expect_text(child, "still being written", timeout=10)
    expect_text(child, "three steps in a row", timeout=15)  # the whole plan, printed by the review screen
    expect_text(child, "add to the plan", timeout=10)  # its key hint: Enter now approves
    assert planner.done.is_set()
    assert "Plan approved" not in child.before
    assert not [r for r in fake.requests if r.body and any(task_is(t)(r.body) for t in TASKS)]
    child.send(ENTER)
    expect_text(child, "Plan approved.", timeout=10)
    expect_text(child, "All three steps are done.", timeout=20)
    child.expect_exact(PROMPT, timeout=10)
    assert [r for r in fake.requests if r.body and task_is("third")(r.body)]
