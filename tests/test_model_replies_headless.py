"""Reasoning and empty replies through the real CLI: thinking never reaches a result or the JSON stream,
an empty task reply is asked again once and then fails the task, an empty chat answer says so."""

from __future__ import annotations

from pathlib import Path

from paicli.common.events import PlanFinished
from paicli.common.kinds import PlanStatus
from paicli.common.values import Usage
from paicli.headless import usage_line
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, SUMMARIZER, plan_json, requests_of, script_summary, system_is, task_is

THOUGHT = "SECRET-THOUGHT-7f3a"


def test_reasoning_is_never_in_a_task_result_the_summary_or_the_json(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []}), reasoning=f"{THOUGHT} planning"))
    fake.on(task_is("a"), Reply.text("a done", reasoning=f"{THOUGHT} while working"))
    script_summary(fake, "Shipped.")
    done = run_paicli(["-C", str(workspace), "plan", "ship it", "--yes", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert done.of("task_finished")[0]["result"] == "a done"
    assert THOUGHT not in done.stdout and THOUGHT not in done.stderr
    summarizer = next(r for r in fake.requests if r.body and system_is(SUMMARIZER)(r.body))
    assert THOUGHT not in summarizer.text


def test_an_empty_task_reply_is_asked_again_then_the_task_fails(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text(""), repeat=True)
    done = run_paicli(
        ["-C", str(workspace), "plan", "ship it", "--yes", "--json", "--max-replans", "0"], paicli_env(fake, home)
    )
    assert done.code == 1
    (finished,) = done.of("task_finished")
    assert finished["status"] == "FAILED" and "the model returned an empty answer" in finished["error"]
    assert len(requests_of(fake, "a")) == 2
    assert "Your last reply was empty" in requests_of(fake, "a")[1].messages[-1]["content"]


def test_an_empty_chat_answer_says_so(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("hello", Reply.text(""), repeat=True)
    done = run_paicli(["-C", str(workspace), "run", "hello"], paicli_env(fake, home))
    assert done.code == 1
    assert "the model returned an empty answer" in done.stderr and done.stdout == ""


def test_the_headless_report_marks_estimated_tokens() -> None:
    guessed = PlanFinished(
        status=PlanStatus.COMPLETED,
        summary="Done.",
        usage=Usage(prompt_tokens=12_345, completion_tokens=67, estimated=True),
    )
    assert usage_line(guessed) == (
        "Plan COMPLETED · ↑ ~12.3k ↓ ~67 tokens (~ estimated where the server reported no usage)"
    )
    exact = PlanFinished(status=PlanStatus.COMPLETED, usage=Usage(prompt_tokens=12_345, completion_tokens=67))
    assert usage_line(exact) == "Plan COMPLETED · ↑ 12,345 ↓ 67 tokens"
