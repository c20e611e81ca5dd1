"""Every benchmark runs on a tiny size, so the suite cannot rot. The figures are not checked against their
targets (this machine is noisy and the sizes are too small); what is checked is that each benchmark does
its job: the work completes, the metrics are there, the outcomes that do not depend on timing hold."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.common import REPO, Result, table
from bench.suite import BENCHMARKS, run_benchmarks


def metric(result: Result, prefix: str) -> float | int | str | None:
    return next(m.value for m in result.metrics if m.name.startswith(prefix))


def check_finite_figures(result: Result) -> None:
    assert result.metrics, result.name
    for m in result.metrics:
        assert m.value is not None, (result.name, m.name)
        if isinstance(m.value, float):
            assert math.isfinite(m.value), (result.name, m.name, m.value)
            # a time "beyond a bare call" is a difference of two timings: a little under 0 on a busy machine
            assert m.value >= 0 or "beyond" in m.name, (result.name, m.name, m.value)
    json.dumps(result.details)  # the JSON file can be written
    assert table([result]).splitlines()[2].startswith(result.name)


def the_soak_completes_every_task_under_faults_without_running_a_call_twice(soak: Result) -> None:
    assert metric(soak, "completion rate") == 100.0
    assert metric(soak, "tool calls run twice") == 0
    assert metric(soak, "results from a partial reply") == 0
    assert int(metric(soak, "faults injected") or 0) > 0


def parse_robustness_has_no_false_accepts_or_crashes(parse: Result) -> None:
    assert metric(parse, "false accepts") == 0
    assert metric(parse, "crashes") == 0
    assert metric(parse, "SSE byte splits") == 100.0
    assert metric(parse, "accepted correctly") == 100.0


def the_shell_differential_finds_no_false_safe(shelldiff: Result) -> None:
    assert metric(shelldiff, "false SAFE") == 0
    assert int(metric(shelldiff, "called SAFE") or 0) > 0  # some commands really ran


def the_bash_fuzzer_runs_its_cases_in_the_sandbox_or_says_why_not(fuzz: Result) -> None:
    if "problem" in fuzz.details:
        assert str(metric(fuzz, "bash probe")).startswith("not run")
        return
    assert metric(fuzz, "cases run") == fuzz.details["cases"] > 100  # of 160 drawn: a line drawn again runs once
    assert fuzz.details["cases"] + fuzz.details["repeated"] == 160
    assert fuzz.details["started_programs"] > 0  # bash really started programs
    assert isinstance(fuzz.details["seed"], int)


def tokens_job_is_done_by_every_mode_with_the_scripted_requests(tokens: Result) -> None:
    runs = tokens.details["2 KB files"]
    # The write task ends with its write_file call (it writes its one declared file whole): one request.
    assert runs["model reads"]["requests"] == 15  # planner, 13 in the tasks, summary
    assert runs["direct actions"]["requests"] == 5  # planner, 2 analyses, 1 for the write, summary
    assert runs["react"]["requests"] == 7
    assert runs["direct actions"]["estimate"]["requests"] == 4  # the same, without the planner's
    shared = runs["direct actions"]["tool_lists"]["one shared list, cached from 1024 tokens"]
    per_type = runs["direct actions"]["tool_lists"]["per type, cached from 1024 tokens"]
    assert per_type["prompt_tokens"] < shared["prompt_tokens"] and per_type["cached_tokens"] < shared["cached_tokens"]
    calibration = tokens.details["2 KB files, calibration"]
    fresh, learned = (
        calibration["analyses that read, not calibrated"],
        calibration["analyses that read, after the same shape"],
    )
    assert (
        fresh["over_run"][0] < 1 and fresh["estimate"]["uncalibrated"] > 0
    )  # the rule counts one request per analysis
    assert learned["over_run"][0] == 1.0 and learned["in_range"] and learned["estimate"]["uncalibrated"] == 0


def makespan_completes_every_task(makespan: Result) -> None:
    skewed = makespan.details["skewed chains"]
    assert skewed["tasks"] == 9 and all(spans for spans in skewed["makespans_s"].values())


def dispatch_completes_every_task(dispatch: Result) -> None:
    assert dispatch.details["1 chain, plan saved"]["dispatches"] > 0


def overhead_completes_every_task(overhead: Result) -> None:
    assert overhead.details["full_stack_lattice"]["tasks"] == 100


def memory_runs_the_whole_plan_and_samples_the_chat(memory: Result) -> None:
    assert metric(memory, "10-task plan, 4 parallel: tasks finished") == 10
    assert float(metric(memory, "10-task plan, 4 parallel: peak RSS") or 0) > 10  # MB: a real peak was read
    assert [sample["turn"] for sample in memory.details["rss_curve_mb"]] == list(range(11))  # 10 turns
    assert metric(memory, "REPL with a 2,000-entry history: entries left") == 2_001  # the line sent twice: once


def a_long_chat_is_compressed_and_keeps_its_prefix_between_compressions(longchat: Result) -> None:
    assert int(metric(longchat, "compressions") or 0) > 0
    assert metric(longchat, "requests between compressions that extend") == 100.0
    per_turn = longchat.details["per_turn"]
    assert len(per_turn["compressed"]) == len(per_turn["uncompressed"]) == 12
    assert sum(per_turn["compressed"]) < sum(per_turn["uncompressed"])


def the_render_benchmark_times_the_refreshes_of_a_paced_stream(render: Result) -> None:
    assert int(metric(render, "paced at 500 chars/s, 10 KB: refreshes") or 0) > 10
    assert 0 < float(metric(render, "REPL (live preview): 10 KB ÷ one render") or 0) < 10


def the_request_path_times_the_shipped_client_and_the_old_stack_when_installed(requests: Result) -> None:
    names = [m.name for m in requests.metrics]
    assert "shipped: client CPU per request" in names and "shipped: 16 at once, the last at the server after" in names
    assert ("httpx (before): client CPU per request" in names) == (importlib.util.find_spec("httpx") is not None)


def grep_finds_the_real_matches_and_nothing_ignored(grep: Result) -> None:
    found = metric(grep, "matching lines found by grep_code")
    assert found == metric(grep, "matching lines in the tree") == metric(grep, "matching lines found by GNU grep")
    assert int(found or 0) > 0
    assert metric(grep, "results under the git-ignored build/") == 0
    if grep.details["rg"]:
        assert metric(grep, "rg and in process give the same output") == "yes"


def the_plan_contract_is_checked_on_a_thousand_writers(dags: Result) -> None:
    chained = dags.details["plan contract, 1,000 tasks, chain of writers of one file"]
    apart = dags.details["plan contract, 1,000 tasks, writers apart"]
    assert chained["tasks"] == apart["tasks"] == 1000 and chained["problems"] == apart["problems"] == 0


def the_context_benchmark_finds_the_changed_files_in_the_planner_request(context: Result) -> None:
    figures = context.details["generated"]
    assert figures["commits"] == 6
    assert figures["recall"]["map@3000"] == 1.0  # every commit's files are named in its request
    assert figures["recall"]["map@3000"] >= figures["recall"]["bm25@3000"]


def reads_start_while_the_plan_streams_only_with_early_start(stream: Result) -> None:
    """(The benchmark itself fails when the two modes send different task requests.)"""
    figures = stream.details["80 tok/s"]
    assert figures["today"]["first_task_s"] >= figures["today"]["reply_s"]  # today: after the whole reply
    assert figures["early"]["first_task_s"] < figures["early"]["reply_s"]  # early: while it streams
    assert sorted(figures["early"]["read_lags_ms"]) == [f"r{n}" for n in range(1, 9)]


def every_eval_run_passes_with_the_oracle_and_records_its_harness_time(evalrun: Result) -> None:
    assert metric(evalrun, "runs passed") == 2
    assert all(record["harness_s"] >= 0 and record["outcome"] == "pass" for record in evalrun.details["records"])


def the_builtin_suite_passes_with_the_oracle_in_both_modes(evalsuite: Result) -> None:
    from bench.evalsuite import solution_files

    assert metric(evalsuite, "plan: runs passed") == metric(evalsuite, "chat: runs passed") == 1
    runs = evalsuite.details["runs"]
    assert [(r["task"], r["mode"]) for r in runs] == [tuple(key) for key in evalsuite.details["planned"]]
    for record in runs:  # the oracle wrote the reference solution, and nothing else
        assert record["outcome"] == "pass" and record["harness_s"] >= 0
        assert sorted(record["files_changed"]) == sorted(solution_files(record["task"])), record


CHECKS: dict[str, Callable[[Result], None]] = {
    "dag": the_plan_contract_is_checked_on_a_thousand_writers,
    "makespan": makespan_completes_every_task,
    "dispatch": dispatch_completes_every_task,
    "overhead": overhead_completes_every_task,
    "requests": the_request_path_times_the_shipped_client_and_the_old_stack_when_installed,
    "parse": parse_robustness_has_no_false_accepts_or_crashes,
    "tokens": tokens_job_is_done_by_every_mode_with_the_scripted_requests,
    "longchat": a_long_chat_is_compressed_and_keeps_its_prefix_between_compressions,
    "render": the_render_benchmark_times_the_refreshes_of_a_paced_stream,
    "memory": memory_runs_the_whole_plan_and_samples_the_chat,
    "shelldiff": the_shell_differential_finds_no_false_safe,
    "fuzz-shell": the_bash_fuzzer_runs_its_cases_in_the_sandbox_or_says_why_not,
    "soak": the_soak_completes_every_task_under_faults_without_running_a_call_twice,
    "grep": grep_finds_the_real_matches_and_nothing_ignored,
    "context": the_context_benchmark_finds_the_changed_files_in_the_planner_request,
    "streamplan": reads_start_while_the_plan_streams_only_with_early_start,
    "evalrun": every_eval_run_passes_with_the_oracle_and_records_its_harness_time,
    "evalsuite": the_builtin_suite_passes_with_the_oracle_in_both_modes,
}


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_each_benchmark_runs_reports_finite_figures_and_does_its_job(name: str) -> None:
    # one test a benchmark, so the workers share them out (all in one fixture took a minute)
    (result,) = run_benchmarks([name], quick=True, progress=lambda line: None)
    assert result.name == name
    check_finite_figures(result)
    if name in CHECKS:
        CHECKS[name](result)


# Benchmarks whose only outcome is their timings; each says what already fails its run when it breaks.
FIGURES_ONLY: dict[str, str] = {
    "checkpoints": "times taking and restoring checkpoints; a failed git call raises in the run",
    "keys": "times ESC and key echoes; the run raises when the REPL never shows its prompt again",
    "sandbox": "times commands with and without bubblewrap; a command that fails raises in the run",
    "startup": "times the start-up; the run raises when paicli never answers or never prompts",
}


def test_every_benchmark_has_its_job_checked_or_says_why_it_has_none() -> None:
    """A new benchmark must come with a check of what it does, or a reason here why its figures suffice."""
    assert set(CHECKS).isdisjoint(FIGURES_ONLY)
    assert set(CHECKS) | set(FIGURES_ONLY) == set(BENCHMARKS)


def test_the_command_line_writes_json_results(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "dag", "--quick", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "random 1,000: all four" in done.stdout
    latest = json.loads((tmp_path / "latest.json").read_text())
    assert [r["name"] for r in latest["results"]] == ["dag"]
    assert latest["machine"]["nproc"] >= 1
    assert (tmp_path / "dag.json").is_file()


def test_an_unknown_benchmark_name_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "bench", "nope"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown benchmark" in done.stderr
