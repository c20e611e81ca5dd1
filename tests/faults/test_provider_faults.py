"""A busy provider against whole plans and chat turns (issue 18): `paicli` as a subprocess (or in a
pseudo-terminal) against the fake server, with the issue's times scaled down through the settings.
Client-level cases of the same faults: tests/llm/test_rate_limits.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pydantic import SecretStr

from paicli.common.events import ListSink, PlanFinished
from paicli.common.values import Retries, Usage
from paicli.config import Settings
from paicli.headless import usage_line
from paicli.plan_wiring import build_plan_session
from paicli.runtime import build_runtime
from tests.conftest import TEST_KEY, paicli_env, run_paicli
from tests.fakellm import STORM, FakeLLM, Reply, has_tool_result, has_tools
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is

TASKS = 12


def twelve_parallel_tasks(fake: FakeLLM) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({f"task_{n}": [] for n in range(1, TASKS + 1)})))
    for n in range(1, TASKS + 1):
        fake.on(task_is(f"task_{n}"), Reply.text(f"task {n} done"), repeat=True)
    script_summary(fake)


def settings(home: Path, text: str) -> None:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.05\nreview = false\n" + text)


def test_a_429_storm_against_twelve_parallel_tasks_is_waited_out(fake: FakeLLM, workspace: Path, home: Path) -> None:
    twelve_parallel_tasks(fake)
    fake.storm(1.5, Reply.error(429, "Rate limit reached", headers={"Retry-After": "1"}), match=has_tools)
    args = ["-C", str(workspace), "plan", "do twelve things", "--yes", "--json", "--max-parallel", str(TASKS)]

    done = run_paicli(args, paicli_env(fake, home))

    assert done.code == 0, done.stderr
    assert {e["status"] for e in done.of("task_finished")} == {"COMPLETED"}
    stormed = [r for r in fake.requests if r.rule == STORM]
    assert 1 <= len(stormed) <= TASKS + 3  # the first burst, then one probe a second: never 12 retrying each
    finished = done.of("plan_finished")[-1]
    assert finished["status"] == "COMPLETED"
    assert finished["retries"]["rate_limited"] == len(stormed) and finished["retries"]["waited_seconds"] > 0
    waits = [e["message"] for e in done.of("notice") if e["message"].startswith("rate limited")]
    assert waits and "waiting 1.0 s before trying again" in waits[0]


def test_a_task_rate_limited_past_the_budget_fails_and_the_progress_line_said_so(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    settings(home, "rate_limit_wait = 1\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"task_1": []})))
    fake.on(task_is("task_1"), Reply.error(429, "quota exceeded", headers={"Retry-After": "0.3"}), repeat=True)
    args = ["-C", str(workspace), "plan", "do it", "--yes", "--max-replans", "0"]

    done = run_paicli(args, paicli_env(fake, home))

    assert done.code == 1
    assert "■ task_1 FAILED: model request failed: HTTP 429: quota exceeded — rate limited for 1 s" in done.stderr
    assert "paicli: rate limited (HTTP 429: quota exceeded); waiting 0.3 s before trying again" in done.stderr
    assert len(fake.requests) <= 1 + 5  # the planner, then about one probe each 0.3 s


def test_a_stream_dropped_mid_tool_call_runs_the_call_once(fake: FakeLLM, workspace: Path, home: Path) -> None:
    call = Reply.tool_calls([("write_file", {"path": "notes.txt", "content": "written once\n"})])
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."))
    fake.on("write the notes", dataclasses.replace(call, kind="drop", after_chunks=3), call)

    done = run_paicli(["-C", str(workspace), "run", "write the notes", "--json"], paicli_env(fake, home))

    assert done.code == 0, done.stderr
    assert [e["name"] for e in done.of("tool_call")] == ["write_file"]
    assert (workspace / "notes.txt").read_text() == "written once\n"
    assert done.of("run_finished")[-1]["content"] == "Wrote it."
    assert not done.of("reply_restarted")  # a stream detail, like the text deltas: not in --json


def test_a_plan_task_whose_stream_hangs_is_asked_again(fake: FakeLLM, workspace: Path, home: Path) -> None:
    settings(home, "read_timeout = 0.5\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"task_1": []})))
    fake.on(task_is("task_1"), Reply.hang(after_chunks=2, content="an answer that stops"), Reply.text("finished"))
    script_summary(fake)

    done = run_paicli(["-C", str(workspace), "plan", "do it", "--yes", "--json"], paicli_env(fake, home))

    assert done.code == 0, done.stderr
    result = next(e for e in done.of("task_finished") if e["task_id"] == "task_1")
    assert result["status"] == "COMPLETED" and result["result"] == "finished"  # never the partial text
    assert done.of("plan_finished")[-1]["retries"]["timeouts"] == 1


async def test_one_endpoint_per_process_sized_by_max_parallel(fake: FakeLLM, workspace: Path) -> None:
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(TEST_KEY),
        base_url=fake.base_url,
        model="fake-model",
        max_parallel=3,
        rate_limit_wait=7,
        review=False,
    )
    runtime = build_runtime(settings, ListSink())
    try:
        session = build_plan_session(runtime, ListSink())
        assert runtime.llm.endpoint.limit.maximum == 3 and runtime.llm.rate_limit_wait == 7
        assert session.meter is not None and session.meter.inner is runtime.llm  # planner, tasks, summary: one client
    finally:
        await runtime.aclose()


def test_the_headless_report_says_what_was_retried() -> None:
    finished = PlanFinished(
        status="COMPLETED",
        usage=Usage(prompt_tokens=100, completion_tokens=7),
        retries=Retries(rate_limited=3, errors=1, waited_seconds=2.0),
    )
    assert usage_line(finished) == (
        "Plan COMPLETED · ↑ 100 ↓ 7 tokens · retried 3 rate limited, 1 error (waits summing to 2.0 s)"
    )
