"""Issue 29, the small ones: the estimate in `plan_created` and `plan_approved`, the plans folder's
`.gitignore` whatever was there before, and `--yes` said to approve the later rounds too."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, REPLANNER, plan_json, script_summary, system_is, task_is


def plan(workspace: Path, fake: FakeLLM, home: Path, *extra: str) -> Finished:
    return run_paicli(["-C", str(workspace), "plan", "build it", "--yes", "--json", *extra], paicli_env(fake, home))


def test_plan_created_and_plan_approved_carry_the_estimate_in_every_round(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.error(500, "down"), repeat=True)
    fake.on(system_is(REPLANNER), Reply.text(plan_json({"c": [], "d": [], "e": ["c"]})))
    fake.on(task_is("c"), Reply.text("ok"), repeat=True)
    fake.on(task_is("d"), Reply.text("ok"), repeat=True)
    fake.on(task_is("e"), Reply.text("ok"), repeat=True)
    script_summary(fake)
    done = plan(workspace, fake, home)
    assert done.code == 0, done.stderr
    created, approved = done.of("plan_created"), done.of("plan_approved")
    assert [e["round"] for e in created] == [1, 2] and [e["round"] for e in approved] == [1, 2]
    for event in created + approved:
        assert event["estimate"]["requests"] > 0 and event["estimate"]["prompt_tokens"] > 0, event
    # the second round has three tasks to run, the first two: its own estimate says so
    assert created[1]["estimate"]["requests"] > created[0]["estimate"]["requests"]
    assert approved[1]["estimate"] == created[1]["estimate"]
    finished = done.of("plan_finished")[0]["estimate"]
    assert finished["requests"] == approved[0]["estimate"]["requests"] + approved[1]["estimate"]["requests"]


def test_a_plan_from_a_file_has_its_estimate_in_plan_created(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "p.json").write_text(plan_json({"a": []}))
    fake.on(task_is("a"), Reply.text("ok"))
    script_summary(fake)
    done = run_paicli(
        ["-C", str(workspace), "plan", "--from", str(workspace / "p.json"), "--yes", "--json"], paicli_env(fake, home)
    )
    assert done.code == 0, done.stderr
    assert done.of("plan_created")[0]["estimate"]["requests"] >= 2  # the task and the summary
    assert done.of("plan_approved")[0]["estimate"]["requests"] >= 2


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True, check=True).stdout


def test_the_plans_folder_gets_its_gitignore_even_when_the_repository_shipped_a_file_there(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    _git(workspace, "init", "-q")
    plans = workspace / ".paicli" / "plans"
    plans.mkdir(parents=True)
    (plans / "README.md").write_text("example plans\n")
    _git(workspace, "add", ".")
    _git(workspace, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "ship a plans readme")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("ok"))
    script_summary(fake)
    assert plan(workspace, fake, home).code == 0
    assert (plans / ".gitignore").is_file()
    assert list(plans.glob("*.json"))
    assert _git(workspace, "status", "--porcelain") == ""  # the saved plan is not offered to git


def test_a_gitignore_of_the_users_own_in_the_plans_folder_is_kept(fake: FakeLLM, workspace: Path, home: Path) -> None:
    plans = workspace / ".paicli" / "plans"
    plans.mkdir(parents=True)
    (plans / ".gitignore").write_text("*.md\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("ok"))
    script_summary(fake)
    assert plan(workspace, fake, home).code == 0
    assert (plans / ".gitignore").read_text() == "*.md\n"


def test_plan_help_says_yes_approves_the_replanned_rounds_too(fake: FakeLLM, home: Path) -> None:
    shown = run_paicli(["plan", "--help"], paicli_env(fake, home))
    text = " ".join(shown.stdout.split())
    assert shown.code == 0 and "approve the plan unasked, and every later round too" in text
