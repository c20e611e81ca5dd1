"""Review rounds, the hard token budget and durable plans that resume: the real CLI against the fake."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import Finished, paicli_env, run_paicli, start_paicli
from tests.fakellm import FakeLLM, Reply, has_tools
from tests.plan_script import PLANNER, REPLANNER, REVIEWER, plan_json, requests_of, script_summary, system_is, task_is


@pytest.fixture
def reviewing_home(home: Path) -> Path:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = true\nmax_rounds = 3\n")
    return home


def plan(workspace: Path, fake: FakeLLM, home: Path, *extra: str) -> Finished:
    return run_paicli(["-C", str(workspace), "plan", "ship it", "--yes", "--json", *extra], paicli_env(fake, home))


def verdict(score: float, reflection: str) -> Reply:
    return Reply.text(json.dumps({"score": score, "reflection": reflection}))


def test_low_score_runs_another_round_with_the_reflection_then_stops_when_good(
    fake: FakeLLM, workspace: Path, reviewing_home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"code": []})))
    fake.on(system_is(REVIEWER), verdict(5, "tests are missing for the parser"), verdict(9, "complete"))
    fake.on(system_is(REPLANNER), Reply.text(plan_json({"tests": []})))
    fake.on(has_tools, Reply.text("work done"), repeat=True)
    script_summary(fake, "Shipped.")
    done = plan(workspace, fake, reviewing_home)
    assert done.code == 0, done.stderr
    assert [(e["round"], e["score"]) for e in done.of("review")] == [(1, 5), (2, 9)]
    replan = next(r for r in fake.requests if r.body and system_is(REPLANNER)(r.body))
    assert "tests are missing for the parser" in replan.text
    assert done.of("plan_finished")[0]["summary"] == "Shipped."


def test_a_review_that_never_passes_stops_at_max_rounds_and_says_so(
    fake: FakeLLM, workspace: Path, reviewing_home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"code": []})))
    fake.on(system_is(REVIEWER), verdict(3, "still wrong"), repeat=True)
    fake.on(system_is(REPLANNER), Reply.text(plan_json({"again": []})), repeat=True)
    fake.on(has_tools, Reply.text("tried"), repeat=True)
    script_summary(fake)
    done = plan(workspace, fake, reviewing_home)
    assert [e["score"] for e in done.of("review")] == [3, 3, 3]
    assert any("max_rounds" in e["message"] for e in done.of("notice"))
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"


def test_an_unreadable_review_is_reasked_then_fails_the_plan(
    fake: FakeLLM, workspace: Path, reviewing_home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"code": []})))
    fake.on(system_is(REVIEWER), Reply.text("Looks great to me!"), repeat=True)
    fake.on(has_tools, Reply.text("done"), repeat=True)
    done = plan(workspace, fake, reviewing_home)
    assert done.code == 1
    assert len([r for r in fake.requests if r.body and system_is(REVIEWER)(r.body)]) == 2
    assert "could not be read" in done.stderr
    assert not done.of("review")


def test_hard_budget_fails_the_plan_and_starts_no_request_after_it(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = false\nmax_budget_tokens = 500\n")
    small = {"prompt_tokens": 100, "completion_tokens": 10}
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]}), usage=small))
    fake.on(task_is("a"), Reply.text("a done", usage={"prompt_tokens": 900, "completion_tokens": 10}))
    fake.on(task_is("b"), Reply.text("b done"))
    done = plan(workspace, fake, home)
    assert done.code == 1
    finished = done.of("plan_finished")[0]
    assert finished["status"] == "FAILED" and "budget spent" in finished["summary"]
    spent = {"prompt_tokens": 1000, "completion_tokens": 20}
    assert finished["usage"] == {**spent, "by_model": {"fake-model": spent}}
    assert requests_of(fake, "b") == []


def test_the_budget_trips_when_the_server_never_reports_usage(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """Like llama.cpp's server: no usage chunk at all. The estimate counts, is marked, and trips the budget."""
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = false\nmax_budget_tokens = 6000\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]}), usage=False))
    fake.on(task_is("a"), Reply.text("a done " * 4000, usage=False))  # about 7,000 tokens by the rule
    fake.on(task_is("b"), Reply.text("b done", usage=False))
    done = plan(workspace, fake, home)
    assert done.code == 1
    finished = done.of("plan_finished")[0]
    assert finished["status"] == "FAILED" and "budget spent" in finished["summary"]
    assert finished["usage"]["estimated"] is True and finished["usage"]["completion_tokens"] >= 6000
    assert all(event["usage"]["estimated"] for event in done.of("usage"))
    assert requests_of(fake, "b") == []


def saved_task_done(workspace: Path, task_id: str) -> bool:
    try:
        tasks = saved_plan(workspace)["plan"]["tasks"]
    except (ValueError, KeyError):  # not written yet
        return False
    return any(t["id"] == task_id and t["status"] == "COMPLETED" for t in tasks)


def saved_plan(workspace: Path) -> dict:  # type: ignore[type-arg]
    (path,) = (workspace / ".paicli" / "plans").glob("*.json")
    return json.loads(path.read_text())


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_a_stopped_plan_resumes_without_rerunning_completed_tasks(
    fake: FakeLLM, workspace: Path, home: Path, stop: signal.Signals
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.text("A-DONE"))
    fake.on(task_is("b"), Reply.hang())
    proc = start_paicli(["-C", str(workspace), "plan", "two steps", "--yes", "--json"], paicli_env(fake, home))
    try:
        fake.wait_for_requests(3, timeout=20)
        # Saving runs beside the tasks and lands within milliseconds: wait for a's completion to be on
        # disk, as it is long before anyone could press a key or kill the process.
        deadline = time.monotonic() + 10
        while not saved_task_done(workspace, "a"):
            assert time.monotonic() < deadline, "a's completion never reached the plan file"
            time.sleep(0.02)
        proc.send_signal(stop)
        proc.communicate(timeout=10)
    finally:
        proc.kill()
    record = saved_plan(workspace)
    tasks = {t["id"]: t for t in record["plan"]["tasks"]}
    assert tasks["a"]["status"] == "COMPLETED" and tasks["a"]["result"] == "A-DONE"
    fake.on(task_is("b"), Reply.text("B-DONE"))  # registered after the hang, so served once it is used up
    script_summary(fake)
    done = run_paicli(
        ["-C", str(workspace), "plan", "--resume", record["id"], "--yes", "--json"], paicli_env(fake, home)
    )
    assert done.code == 0, done.stderr
    assert len(requests_of(fake, "a")) == 1
    assert "A-DONE" in requests_of(fake, "b")[-1].text
    # headless, the reused result is announced before anything runs (the file may say anything)
    notices = [e["message"] for e in done.of("notice")]
    assert any("reusing the results of a from the saved plan" in m for m in notices), notices
    assert saved_plan(workspace)["plan"]["status"] == "COMPLETED"
