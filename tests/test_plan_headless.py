"""`paicli plan GOAL --yes --json` end to end: the real CLI in a subprocess against the fake server."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import Finished, paicli_env, run_paicli, start_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import (
    PLANNER,
    REPLANNER,
    brief,
    plan_json,
    requests_of,
    script_summary,
    system_is,
    task_is,
)


def plan(workspace: Path, fake: FakeLLM, home: Path, *extra: str, goal: str = "build it") -> Finished:
    return run_paicli(["-C", str(workspace), "plan", goal, "--yes", "--json", *extra], paicli_env(fake, home))


def spans(fake: FakeLLM, task_id: str) -> tuple[float, float]:
    reqs = requests_of(fake, task_id)
    return reqs[0].started, reqs[-1].finished  # type: ignore[return-value]


def test_diamond_runs_in_parallel_and_each_task_sees_only_direct_dependencies(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]})))
    fake.on(task_is("a"), Reply.text("A-RESULT"))
    fake.on(task_is("b"), Reply.text("B-RESULT", latency=1.0))
    fake.on(task_is("c"), Reply.text("C-RESULT", latency=1.0))
    fake.on(task_is("d"), Reply.text("D-RESULT"))
    script_summary(fake, "Built it.")
    done = plan(workspace, fake, home)
    assert done.code == 0, done.stderr
    kinds = [e["event"] for e in done.events() if e["event"] not in ("usage", "notice")]
    assert kinds[:6] == ["plan_task_streamed"] * 4 + ["plan_created", "plan_approved"] and kinds[-1] == "plan_finished"
    streamed = done.of("plan_task_streamed")
    assert [e["task"] for e in streamed] == done.of("plan_created")[0]["plan"]["tasks"]  # each as it was written
    assert {e["round"] for e in streamed} == {1} and {e["attempt"] for e in streamed} == {1}
    assert done.of("plan_created")[0]["plan"]["tasks"][3] == {
        "id": "d",
        "description": "do d",
        "type": "ANALYSIS",
        "dependencies": ["b", "c"],
        "status": "PENDING",
    }
    finished = done.of("plan_finished")[0]
    assert finished["status"] == "COMPLETED" and finished["summary"] == "Built it."
    assert finished["usage"]["prompt_tokens"] > 0
    assert finished["requests"] == len(fake.requests) - 1  # four tasks and the summary: all but the planner's
    assert finished["estimate"]["requests"] >= 5 and finished["estimate"]["prompt_tokens"] > 0
    b, c = spans(fake, "b"), spans(fake, "c")
    assert b[0] < c[1] and c[0] < b[1], "b and c should overlap"
    d_brief = brief(requests_of(fake, "d")[0].body)
    assert "B-RESULT" in d_brief and "C-RESULT" in d_brief and "A-RESULT" not in d_brief
    c_brief = brief(requests_of(fake, "c")[0].body)
    assert "A-RESULT" in c_brief and "B-RESULT" not in c_brief
    assert [e["status"] for e in done.of("task_finished")] == ["COMPLETED"] * 4
    saved = list((workspace / ".paicli" / "plans").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["plan"]["status"] == "COMPLETED"


def test_eager_starts_a_dependent_while_an_unrelated_task_still_runs(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": [], "c": ["a"]})), repeat=True)
    fake.on(task_is("a"), Reply.text("a done", latency=0.05), repeat=True)
    fake.on(task_is("b"), Reply.text("b done", latency=1.0), repeat=True)
    fake.on(task_is("c"), Reply.text("c done", latency=0.05), repeat=True)
    script_summary(fake)
    assert plan(workspace, fake, home).code == 0
    assert spans(fake, "c")[0] < spans(fake, "b")[1]
    first = len(fake.requests)
    assert plan(workspace, fake, home, "--schedule", "batch").code == 0
    later = fake.requests[first:]
    c_start = next(r.started for r in later if r.body and task_is("c")(r.body))
    b_end = next(r.finished for r in later if r.body and task_is("b")(r.body))
    assert c_start >= b_end


def test_failed_task_skips_dependents_then_replan_with_results_completes(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"], "c": ["b"], "x": []})))
    fake.on(task_is("a"), Reply.error(500, "model exploded on a"), repeat=True)
    fake.on(task_is("x"), Reply.text("X-RESULT: found 3 modules"))
    fake.on(system_is(REPLANNER), Reply.text(plan_json({"a2": ["x"], "b2": ["a2"]})))
    fake.on(task_is("a2"), Reply.text("a2 ok"))
    fake.on(task_is("b2"), Reply.text("b2 ok"))
    script_summary(fake)
    done = plan(workspace, fake, home)
    assert done.code == 0, done.stderr
    status = {e["task_id"]: (e["status"], e.get("error")) for e in done.of("task_finished")}
    assert status["a"][0] == "FAILED" and "model exploded on a" in status["a"][1]
    assert status["b"] == ("SKIPPED", "depends on a, which failed")
    assert status["c"] == ("SKIPPED", "depends on b, which was skipped")
    assert status["x"][0] == "COMPLETED" and status["b2"][0] == "COMPLETED"
    replan_request = next(r for r in fake.requests if r.body and system_is(REPLANNER)(r.body))
    assert "model exploded on a" in replan_request.text and "X-RESULT: found 3 modules" in replan_request.text
    assert [e["round"] for e in done.of("replan")] == [2]
    assert "X-RESULT" in brief(requests_of(fake, "a2")[0].body)
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"


def test_no_replans_left_fails_the_plan_with_exit_1(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": ["a"]})))
    fake.on(task_is("a"), Reply.error(500, "still broken"), repeat=True)
    done = plan(workspace, fake, home, "--max-replans", "0")
    assert done.code == 1
    finished = done.of("plan_finished")[0]
    assert finished["status"] == "FAILED" and "still broken" in finished["summary"]
    assert "still broken" in done.stderr
    assert not [r for r in fake.requests if r.body and system_is(REPLANNER)(r.body)]


def test_sigint_cancels_a_running_plan_with_exit_130(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": [], "b": []})))
    fake.on(task_is("a"), Reply.hang())
    fake.on(task_is("b"), Reply.hang())
    proc = start_paicli(["-C", str(workspace), "plan", "go", "--yes", "--json"], paicli_env(fake, home))
    try:
        fake.wait_for_requests(3, timeout=20)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert elapsed < 5
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "plan_finished" and events[-1]["status"] == "CANCELLED"
    assert all(r.wait_finished(5) and r.disconnected for r in fake.requests[1:3])
    saved = json.loads(next((workspace / ".paicli" / "plans").glob("*.json")).read_text())
    assert saved["plan"]["status"] == "CANCELLED"
    assert {t["status"] for t in saved["plan"]["tasks"]} == {"PENDING"}


def test_a_200_task_plan_from_a_file_completes(fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path) -> None:
    tasks = {f"t{i}": ([f"t{i - 1}"] if i % 10 else []) for i in range(200)}
    plan_file = tmp_path / "big.json"
    plan_file.write_text(plan_json(tasks))
    fake.on(lambda body: True, Reply.text("ok"), repeat=True)
    done = run_paicli(
        ["-C", str(workspace), "plan", "--from", str(plan_file), "--yes", "--json", "--max-parallel", "8"],
        paicli_env(fake, home),
        timeout=120,
    )
    assert done.code == 0, done.stderr
    assert len(done.of("task_finished")) == 200


def test_a_plan_that_never_validates_ends_the_stream_with_plan_finished_failed(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    cyclic = plan_json({"a": ["b"], "b": ["a"]})
    fake.on(system_is(PLANNER), Reply.text(cyclic), repeat=True)
    done = plan(workspace, fake, home)
    assert done.code == 1
    assert len(fake.requests) == 3  # the first reply and two re-asks
    finished = done.events()[-1]
    assert finished["event"] == "plan_finished" and finished["status"] == "FAILED"
    assert "a → b → a" in finished["summary"] or "b → a → b" in finished["summary"]
    assert "→" in done.stderr


def test_a_failed_task_keeps_the_usage_of_its_requests(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.tool_calls([("list_dir", {})], usage={"prompt_tokens": 70, "completion_tokens": 5}))
    fake.on(task_is("a"), Reply.error(400, "context too long"))
    done = plan(workspace, fake, home, "--max-replans", "0")
    assert done.code == 1
    saved = json.loads(next((workspace / ".paicli" / "plans").glob("*.json")).read_text())
    (task,) = saved["plan"]["tasks"]
    tokens = {"prompt_tokens": 70, "completion_tokens": 5}
    assert task["status"] == "FAILED" and task["usage"] == {**tokens, "by_model": {"fake-model": tokens}}


def test_early_start_reads_while_planning_and_sigterm_while_it_streams_exits_130(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    text = plan_json({"a": [], "b": ["a"]})
    fake.on(system_is(PLANNER), Reply.hang(after_chunks=text.index('"b"') // 7 + 1, content=text + " " * 500))
    fake.on(task_is("a"), Reply.hang())
    args = ["-C", str(workspace), "plan", "go", "--yes", "--early", "--json"]
    proc = start_paicli(args, paicli_env(fake, home))
    try:
        fake.wait_for_requests(2, timeout=20)  # the planner's, and task a's while the plan still streams
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert elapsed < 5
    assert all(r.wait_finished(5) and r.disconnected for r in fake.requests)
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events if e["event"] not in ("usage", "notice")] == [
        "plan_task_streamed",
        "plan_finished",
    ]  # task a's events were held for a plan that never came
    assert events[-1]["status"] == "CANCELLED"


def test_early_without_yes_is_a_usage_error(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from paicli.cli import main

    assert main(["-C", str(workspace), "plan", "go", "--early", "--json"]) == 2
    assert "--early goes with --yes" in capsys.readouterr().err
