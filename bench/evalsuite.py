"""evalsuite. The built-in suite `python-basics` through `paicli eval run`, with an oracle (issue 34).

The command a user runs (`paicli eval run python-basics --mode plan,chat`), against the fake server
scripted as an oracle: for each task the model writes the reference solution's files (tests/eval/solutions/
<task>/, never in the package) with `write_file` calls and says it is done. In plan mode the planner's
reply is one FILE_WRITE task declaring those files, then the task writes them and the summary follows; in
chat mode the conversation writes them. One run at a time (`--jobs 1`), agents and checks in bubblewrap
when it works here (`--unsandboxed` otherwise; the details say which). Each record's `harness_s` is the
run's time but the agent's process (`wall_s`), the real pytest check (`check_s`) and the setup (none in
this suite). Target: at most 1 s per run, median and largest. `--quick` runs `--shard 1/25`: two runs, the
first task in plan mode and the thirteenth in chat mode.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import REPO, Result, median, rounded
from bench.evalrun import environment
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, SUMMARIZER, system_is

NAME = "evalsuite"
TITLE = "eval run: the built-in suite with an oracle, plan and chat"
SUITE = "python-basics"
SOLUTIONS = REPO / "tests" / "eval" / "solutions"
MODES = ("plan", "chat")


def solution_files(task: str) -> dict[str, str]:
    """The reference solution of `task`: its files by path relative to the workspace."""
    folder = SOLUTIONS / task
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def script_oracle(fake: FakeLLM, goals: dict[str, str]) -> None:
    """Every task of the suite (by its goal, which every request of its run carries) answered with its
    reference solution, in both modes."""
    fake.on(system_is(SUMMARIZER), Reply.text("All done."), repeat=True)
    for task, goal in goals.items():
        files = solution_files(task)
        plan = {
            "summary": f"write the solution of {task}",
            "tasks": [
                {
                    "id": "task_1",
                    "description": "write the files of the solution",
                    "type": "FILE_WRITE",
                    "dependencies": [],
                    "files": sorted(files),
                }
            ],
        }
        fake.on(all_of(system_is(PLANNER), goal), Reply.text(json.dumps(plan)), repeat=True)
        fake.on(all_of(goal, has_tool_result("write_file")), Reply.text("Done."), repeat=True)
        writes = [("write_file", {"path": path, "content": text}) for path, text in files.items()]
        fake.on(goal, Reply.tool_calls(writes), repeat=True)


def per_mode(result: Result, records: Sequence[dict[str, Any]], mode: str, planned: int) -> None:
    mine = [r for r in records if r["mode"] == mode]
    harness = [float(r["harness_s"]) for r in mine]
    result.add(f"{mode}: runs passed", sum(r["outcome"] == "pass" for r in mine), f"of {planned}")
    result.add(f"{mode}: harness per run (median)", rounded(median(harness)), "s", at_most=1.0)
    result.add(f"{mode}: harness per run (largest)", rounded(max(harness, default=float("nan"))), "s", at_most=1.0)
    result.add(f"{mode}: agent per run (median)", rounded(median([float(r["wall_s"]) for r in mine])), "s")
    result.add(f"{mode}: check per run (median)", rounded(median([float(r["check_s"]) for r in mine])), "s")


def run(*, quick: bool = False) -> Result:
    from paicli.cli import main
    from paicli.eval.builtin import builtin_suite
    from paicli.sandbox import choose_sandbox

    suite_path = builtin_suite(SUITE)
    assert suite_path is not None
    goals = {task["id"]: task["goal"].strip() for task in tomllib.loads(suite_path.read_text())["tasks"]}
    shard = "1/25" if quick else "1/1"
    planned_runs = [(task, mode) for task in goals for mode in MODES]
    k, n = (int(part) for part in shard.split("/"))
    planned = [key for index, key in enumerate(planned_runs) if index % n == k - 1]
    result = Result(NAME, TITLE)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder, FakeLLM() as fake:
        root = Path(os.path.realpath(folder))
        home = root / "home"
        (home / ".paicli").mkdir(parents=True)
        (home / ".paicli").joinpath("config.toml").write_text("retry_backoff = 0.01\n")
        script_oracle(fake, goals)
        sandboxed = choose_sandbox("auto", workspace=root, home=home).sandbox is not None
        env = {"HOME": str(home), "PAICLI_BASE_URL": fake.base_url, "PAICLI_MODEL": "fake-model"}
        args = ["eval", "run", SUITE, "--mode", ",".join(MODES), "--jobs", "1", "--shard", shard]
        args += ["--out", str(root / "out"), *([] if sandboxed else ["--unsandboxed"])]
        with environment(env), open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):
            code = main(args)
        results = root / "out" / "results.jsonl"
        lines = results.read_text().splitlines() if results.is_file() else []
        records = [json.loads(line) for line in lines if line.strip()]
    for mode in MODES:
        per_mode(result, records, mode, sum(1 for _, m in planned if m == mode))
    harness = [float(r["harness_s"]) for r in records]
    result.add("all runs: harness per run (median)", rounded(median(harness)), "s", at_most=1.0)
    runs = [
        {
            name: r[name]
            for name in ("task", "mode", "outcome", "harness_s", "wall_s", "check_s", "requests", "files_changed")
        }
        for r in records
    ]
    result.details = {
        "sandboxed": sandboxed,
        "exit_code": code,
        "shard": shard,
        "planned": [list(key) for key in planned],
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "runs": runs,
        "failed": [
            {"task": r["task"], "mode": r["mode"], "check_tail": r["check_tail"]}
            for r in records
            if r["outcome"] != "pass"
        ],
    }
    return result
