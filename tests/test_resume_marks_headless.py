"""A resumed plan's reused results are marked wherever they go (issue 29): the reviewer, the summarizer,
the replanner and the dependent tasks read "from the saved plan, not re-checked"; a resumed plan with
nothing left to run says so and is reviewed like any other."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import (
    PLANNER,
    REPLANNER,
    REVIEWER,
    SUMMARIZER,
    brief,
    plan_json,
    requests_of,
    system_is,
    task_is,
)

MARK = "from the saved plan, not re-checked"


def review_on(home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = true\nmax_rounds = 2\n")


def verdict(score: float, reflection: str) -> Reply:
    return Reply.text(json.dumps({"score": score, "reflection": reflection}))


def saved_plan(workspace: Path, fake: FakeLLM, home: Path, tasks: dict[str, list[str]], status: str = "FAILED") -> str:
    """A plan run to the end, then its file says `status` (as a crash, or a hand, may leave it)."""
    fake.on(system_is(PLANNER), Reply.text(plan_json(tasks)))
    for task_id in tasks:
        fake.on(task_is(task_id), Reply.text(f"{task_id.upper()}-CLAIMED"))
    fake.on(system_is(SUMMARIZER), Reply.text("first summary"))
    first = run_paicli(["-C", str(workspace), "plan", "go", "--yes", "--json", "--no-review"], paicli_env(fake, home))
    assert first.code == 0, first.stderr
    [path] = (workspace / ".paicli" / "plans").glob("*.json")
    record = json.loads(path.read_text())
    record["plan"]["status"] = status
    path.write_text(json.dumps(record))
    fake.forget_requests()
    return path.stem


def resume(workspace: Path, fake: FakeLLM, home: Path, plan_id: str, *extra: str) -> Finished:
    return run_paicli(
        ["-C", str(workspace), "plan", "--resume", plan_id, "--yes", "--json", *extra], paicli_env(fake, home)
    )


def request_text(fake: FakeLLM, marker: str) -> str:
    return "\n".join(r.text for r in fake.requests if r.body and system_is(marker)(r.body))


def notices(done: Finished) -> str:
    return "\n".join(e["message"] for e in done.of("notice"))


def test_a_resumed_plan_with_nothing_to_run_says_so_and_the_reviewer_sees_the_mark(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    plan_id = saved_plan(workspace, fake, home, {"a": [], "b": ["a"]}, status="RUNNING")
    review_on(home)
    fake.on(system_is(REVIEWER), verdict(9, "fine as claimed"))
    fake.on(system_is(SUMMARIZER), Reply.text("resumed summary"))
    done = resume(workspace, fake, home, plan_id)
    assert done.code == 0, done.stderr
    assert "nothing to run" in notices(done) and "the reviewer judges them" in notices(done)
    assert [e["score"] for e in done.of("review")] == [9]
    reviewed = request_text(fake, REVIEWER)
    assert reviewed.count(MARK) >= 2 and "A-CLAIMED" in reviewed
    assert f"COMPLETED ({MARK})" in reviewed
    assert request_text(fake, SUMMARIZER).count(MARK) >= 2
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"


def test_a_low_review_of_claimed_results_replans_and_the_replanner_sees_the_mark(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    plan_id = saved_plan(workspace, fake, home, {"a": []})
    review_on(home)
    fake.on(system_is(REVIEWER), verdict(2, "nothing shows a was really done"), verdict(9, "checked now"))
    fake.on(system_is(REPLANNER), Reply.text(plan_json({"check_a": ["a"]})))
    fake.on(task_is("check_a"), Reply.text("a verified"))
    fake.on(system_is(SUMMARIZER), Reply.text("verified"))
    done = resume(workspace, fake, home, plan_id)
    assert done.code == 0, done.stderr
    replan = request_text(fake, REPLANNER)
    assert MARK in replan and "A-CLAIMED" in replan
    assert MARK in brief(requests_of(fake, "check_a")[0].body)  # a dependent task is told as well


def test_with_review_off_the_notice_says_nothing_checks_the_claims(fake: FakeLLM, workspace: Path, home: Path) -> None:
    plan_id = saved_plan(workspace, fake, home, {"a": [], "b": []}, status="CANCELLED")
    fake.on(system_is(SUMMARIZER), Reply.text("resumed summary"))
    done = resume(workspace, fake, home, plan_id, "--no-review")
    assert done.code == 0, done.stderr
    assert "nothing to run" in notices(done) and "review is off, so nothing checks them" in notices(done)
    sections = request_text(fake, SUMMARIZER).split("\n## ")[1:]
    assert len(sections) == 2 and all(MARK in section for section in sections)


def test_only_the_reused_results_are_marked_when_part_of_the_plan_runs_again(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.text("A-CLAIMED"))
    fake.on(task_is("b"), Reply.error(500, "down"), Reply.error(500, "down"), Reply.error(500, "down"))
    fake.on(task_is("b"), Reply.text("B-FRESH"), repeat=True)
    fake.on(system_is(SUMMARIZER), Reply.text("done"), repeat=True)
    env = paicli_env(fake, home)
    first = run_paicli(["-C", str(workspace), "plan", "go", "--yes", "--json", "--max-replans", "0"], env)
    assert first.code == 1
    [path] = (workspace / ".paicli" / "plans").glob("*.json")
    done = resume(workspace, fake, home, path.stem)
    assert done.code == 0, done.stderr
    assert "nothing to run" not in notices(done)
    assert MARK in brief(requests_of(fake, "b")[-1].body)
    summarized = request_text(fake, SUMMARIZER).split("## b")[-1]
    assert "B-FRESH" in summarized and MARK not in summarized
