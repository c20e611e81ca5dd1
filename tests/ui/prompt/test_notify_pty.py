"""Plan notifications in the REPL, through a real pseudo-terminal: bell and OSC 9, and `notify = false`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def run_one_plan(spawn_repl: Spawn, fake: FakeLLM) -> str:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"only": []}, summary="one step")))
    fake.on(task_is("only"), Reply.text("did it"))
    script_summary(fake, "Done in one step.")
    child = spawn_repl("--no-review")
    child.send("/plan do the thing" + ENTER)
    expect_text(child, "one step")
    seen = child.before + child.after
    child.send(ENTER)
    expect_text(child, "Done in one step.", timeout=20)
    seen += child.before + child.after
    child.expect_exact(PROMPT, timeout=10)
    return seen + child.before


def write_config(home: Path, text: str) -> None:
    (home / ".paicli").mkdir(parents=True, exist_ok=True)
    (home / ".paicli" / "config.toml").write_text(text)


def test_review_and_completion_ring_the_bell_with_an_osc9(spawn_repl: Spawn, fake: FakeLLM, home: Path) -> None:
    write_config(home, "notify_after = 0\n")
    seen = run_one_plan(spawn_repl, fake)
    assert "\a\x1b]9;plan ready for review\x07" in seen
    assert "\a\x1b]9;plan completed\x07" in seen


def test_notify_false_is_silent(spawn_repl: Spawn, fake: FakeLLM, home: Path) -> None:
    write_config(home, "notify = false\nnotify_after = 0\n")
    seen = run_one_plan(spawn_repl, fake)
    assert "\x1b]9;" not in seen


def test_a_quick_plan_does_not_notify_by_default(spawn_repl: Spawn, fake: FakeLLM) -> None:
    seen = run_one_plan(spawn_repl, fake)
    assert "\x1b]9;" not in seen
