"""A busy provider seen in the REPL (issue 18): a reply asked again after a dropped stream is shown once,
ESC while a request waits on a rate limit cancels at once, and a rate-limited plan says so under its tasks."""

from __future__ import annotations

import io

import pytest

from tests.fakellm import FakeLLM, Reply, has_tools
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty


def test_the_repl_shows_a_restarted_reply_once(spawn_repl: Spawn, fake: FakeLLM) -> None:
    """The screen itself is checked in tests/ui/chat/test_render.py (each block printed once); here, that the
    REPL gets the restart: the answer completes, with no "replaces the text above" line, since it repeats."""
    answer = "The first paragraph of the answer.\n\nThe second paragraph, complete."
    fake.on("explain", Reply.drop(after_chunks=8, content=answer, chunk=5), Reply.text(answer, chunk=5))
    child = spawn_repl()
    child.logfile_read = seen = io.StringIO()
    child.send("explain\r")
    expect_text(child, "The second paragraph, complete.")
    child.expect_exact(PROMPT, timeout=10)
    assert "asking again" in seen.getvalue() and "replaces the text above" not in seen.getvalue()
    assert len(fake.requests) == 2


def test_esc_while_waiting_on_a_rate_limit_cancels_at_once(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("slow down", Reply.error(429, "Rate limit reached", headers={"Retry-After": "60"}), repeat=True)
    child = spawn_repl()
    child.send("slow down\r")
    expect_text(child, "waiting 60.0 s before trying again", timeout=10)
    expect_text(child, "Rate limited… 2 of 4 running, retry in", timeout=5)  # not "Thinking…"
    child.send("\x1b")
    expect_text(child, "cancelled", timeout=5)  # not 60 s later
    child.expect_exact(PROMPT, timeout=5)
    assert len(fake.requests) == 1  # nothing was sent into the closed gate


def test_a_rate_limited_plan_shows_the_rate_line_under_its_tasks_then_completes(
    spawn_repl: Spawn, fake: FakeLLM
) -> None:
    tasks = {f"t{n}": [] for n in range(4)}
    fake.on(system_is(PLANNER), Reply.text(plan_json(tasks, summary="four at once")))
    for task_id in tasks:
        fake.on(task_is(task_id), Reply.text(f"{task_id} done"), repeat=True)
    fake.storm(2.5, Reply.error(429, "Rate limit reached", headers={"Retry-After": "2"}), match=has_tools)
    script_summary(fake, "All four are done.")
    child = spawn_repl("--no-review", "--max-parallel", "4")
    child.send("/plan do four things\r")
    expect_text(child, "four at once")
    expect_text(child, "Enter")
    child.send("\r")
    expect_text(child, "rate limited: 2 of 4 running, retry in", timeout=10)
    expect_text(child, "All four are done.", timeout=20)
    child.expect_exact(PROMPT, timeout=10)
