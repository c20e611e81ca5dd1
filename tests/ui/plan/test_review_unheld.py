"""Without the sandbox the review screen says which tasks' commands are not held to their `files`
(issue 29): they run alone among the writers, and the user sees why before approving."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.input import PipeInput

from paicli.plan.contract import unheld_commands
from paicli.ui.plan.plan_facts import PlanFacts
from tests.ui.plan.review_driver import RecordingPlanner, sample_plan
from tests.ui.plan.test_review_screen import Screen, pipe, planner

__all__ = ["pipe", "planner"]  # the fixtures, shared


def facts(*, sandboxed: bool) -> PlanFacts:
    return PlanFacts(unheld=lambda plan: unheld_commands(plan, sandboxed=sandboxed))


async def test_without_the_sandbox_the_commands_are_named(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner, plan=sample_plan(), facts=facts(sandboxed=False))
    await screen.shows("Level 3")
    text = " ".join(screen.text.split())
    assert "no sandbox: the commands of task_3 are not held to their files" in text
    pipe.send_text("\r")
    assert await screen.result() is not None


async def test_in_the_sandbox_nothing_is_said(pipe: PipeInput, planner: RecordingPlanner, tmp_path: Path) -> None:
    screen = Screen(pipe, planner, plan=sample_plan(), facts=facts(sandboxed=True))
    await screen.shows("Level 3")
    assert "no sandbox" not in screen.text
    pipe.send_text("\r")
    assert await screen.result() is not None
