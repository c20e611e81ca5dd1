"""`paicli eval run`: every planned run, `jobs` at a time (asyncio over subprocesses), each one:

1. a fresh copy of the starting state in `<base>/runs/<index>/work` (paicli/eval/workdir.py);
2. the setup command, with the network, outside the timed run (a failure: `error`);
3. the agent, headless, in that copy (paicli/eval/agent.py), until it ends, its time limit (`timeout`)
   or its token limit (`over_budget`);
4. the hidden check's files copied over the copy and the check command run contained: exit 0 `pass`,
   else `fail`. The check runs where the agent worked (`check_in_place`), so what the setup wrote with
   absolute paths (an editable install, a virtual environment's scripts) still works, unless another
   agent's commands could see that folder: then the copy first moves to `<base>/checks/<index>/work`,
   hidden from every agent;
5. one RunRecord appended to DIR/results.jsonl at once.

Cancelled (Ctrl+C), the running agents are stopped and what finished is kept."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from paicli import __version__
from paicli.app.checkpoints.store import store_folder
from paicli.app.sessions import sessions_folder
from paicli.eval.agent import AgentResult, agent_argv, run_agent
from paicli.eval.commands import Containing, run_command
from paicli.eval.matrix import PlannedRun
from paicli.eval.records import RunRecord, Suite
from paicli.eval.results import ResultsFile
from paicli.eval.workdir import StartError, changed_files, copy_hidden, make_start, snapshot
from paicli.llm.price import Price, cost_of
from paicli.repomap.index import index_folder

SETUP_TIMEOUT = 1800.0  # seconds: installs may be slow, but a setup that hangs must not hang the eval
CHECK_FLOOR = 60.0  # a check gets the task's time limit, at least this
PRIVATE_TMP = Path("/tmp")  # every sandboxed command gets a private one (paicli/sandbox/bwrap.py)


class Progress(Protocol):
    def started(self, run: PlannedRun) -> None: ...

    def finished(self, run: PlannedRun, record: RunRecord) -> None: ...


@dataclass(frozen=True)
class EvalSetup:
    """What every run of one `eval run` shares."""

    suite: Suite
    out: Path
    base: Path  # the temporary folder of the runs (runs/ and checks/)
    containing: Containing  # the suite's own commands (setup, check)
    passed: tuple[str, ...]  # the global options given to `eval`, for every agent
    env: Mapping[str, str]
    home: Path
    prices: Mapping[str, Price]
    agent_hide: tuple[Path, ...]  # hidden from the agents' sandboxes: the suite, DIR, the checks, built-in suites

    @property
    def sandboxed(self) -> bool:
        return self.containing.sandboxed


def make_base() -> Path:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="paicli-eval-")))
    (base / "runs").mkdir()
    (base / "checks").mkdir()
    return base


async def run_all(setup: EvalSetup, runs: Sequence[PlannedRun], jobs: int, progress: Progress) -> list[RunRecord]:
    """Every run, `jobs` at a time; the records of those that finished. Cancelled: the running ones stop
    (their agents ended), nothing half done is recorded, and the cancellation goes on."""
    results = ResultsFile(setup.out)
    gate = asyncio.Semaphore(max(1, jobs))
    finished: list[RunRecord] = []

    async def one(run: PlannedRun) -> None:
        async with gate:
            progress.started(run)
            try:
                record = await run_one(setup, run)
            except Exception as err:  # the harness's own failure (a disk full, a file it could not copy): this
                # run is an `error` with the reason, the others go on
                said = f"paicli eval: {type(err).__name__}: {err}".splitlines()[0][:300]
                record = RunRecord(**run.key.model_dump(), outcome="error", error=said, paicli_version=__version__)
            results.append(record)
            finished.append(record)
            progress.finished(run, record)

    tasks = [asyncio.create_task(one(run)) for run in runs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return finished


async def run_one(setup: EvalSetup, run: PlannedRun) -> RunRecord:
    suite, task = setup.suite, run.task
    began = time.monotonic()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    folder = setup.base / "runs" / str(run.index)
    work = folder / "work"
    record = RunRecord(**run.key.model_dump(), outcome="error", paicli_version=__version__, started_at=started_at)
    setup_s = agent_s = check_s = 0.0
    try:
        folder.mkdir(parents=True, exist_ok=False)
        try:
            await asyncio.to_thread(make_start, suite, task, work, dict(setup.env))
        except StartError as err:
            return _timed(record.model_copy(update={"error": f"starting state: {err}"}), began, 0.0)
        if task.setup:
            done = await run_command(task.setup, work, setup.env, setup.containing, network=True, timeout=SETUP_TIMEOUT)
            setup_s = done.seconds
            if done.exit_code != 0:
                why = "ran out of time" if done.exit_code is None else f"exited with {done.exit_code}"
                return _timed(
                    record.model_copy(update={"error": f"setup {why}", "check_tail": done.tail()}), began, setup_s
                )
        before = await asyncio.to_thread(snapshot, work)
        argv = agent_argv(run.key.mode, task.goal, work, run.key.model, setup.passed, setup.sandboxed, setup.agent_hide)
        agent = await run_agent(
            argv,
            cwd=work,
            env=setup.env,
            time_limit=suite.time_limit_of(task),
            token_limit=suite.token_limit_of(task),
        )
        agent_s = agent.wall_s
        after = await asyncio.to_thread(snapshot, work)
        record = record.model_copy(update=_figures(agent, setup.prices, changed_files(before, after)))
        used = record.prompt_tokens + record.completion_tokens
        if agent.ending == "timeout":
            update = {"outcome": "timeout", "error": f"hit the time limit of {suite.time_limit_of(task):g} s"}
            return _timed(record.model_copy(update=update), began, setup_s + agent_s)
        if agent.ending == "over_budget" or used > suite.token_limit_of(task):  # also when it ended just then
            said = f"hit the token limit of {suite.token_limit_of(task):,} ({used:,} used)"
            return _timed(record.model_copy(update={"outcome": "over_budget", "error": said}), began, setup_s + agent_s)
        if agent.exit_code == 2:  # a usage or configuration error: the agent never had a fair start
            update = {"error": f"paicli: {agent.last_error()}"}
            return _timed(record.model_copy(update=update), began, setup_s + agent_s)
        shown: list[str | Path] = [setup.home, *setup.env.get("PATH", "").split(os.pathsep)]
        shown += setup.containing.writable
        if not check_in_place(setup.base, setup.containing.sandboxed, shown):
            checked = setup.base / "checks" / str(run.index)
            checked.mkdir()
            await asyncio.to_thread(os.replace, work, checked / "work")
            work = checked / "work"
        await asyncio.to_thread(copy_hidden, suite.root / task.hidden, work)
        timeout = max(CHECK_FLOOR, suite.time_limit_of(task))
        check = await run_command(
            suite.check_of(task), work, setup.env, setup.containing, network=False, timeout=timeout
        )
        check_s = check.seconds
        record = record.model_copy(
            update={
                "outcome": "pass" if check.exit_code == 0 else "fail",
                "check_exit": check.exit_code,
                "check_tail": check.tail(),
                "check_s": round(check_s, 3),
            }
        )
        return _timed(record, began, setup_s + agent_s + check_s)
    finally:
        await asyncio.shield(asyncio.to_thread(_clean, setup, run.index, folder / "work"))


def check_in_place(base: Path, sandboxed: bool, shown: Sequence[str | Path] = ()) -> bool:
    """Whether a run's check can run in the folder its agent worked in. In the sandbox every command has
    a private /tmp: with the runs under /tmp no agent's commands see another run's folder (and the file
    tools never leave their workspace), unless a folder the sandbox shows them holds the runs (`shown`:
    the home folder, the PATH folders and the writable caches, bound over the private /tmp when they live
    under it). Elsewhere they would see it (the filesystem is readable), so the copy moves to
    `<base>/checks`, hidden from every agent. Without a sandbox nothing is hidden from the commands."""
    if not sandboxed:
        return True
    if not base.is_relative_to(PRIVATE_TMP):
        return False
    for folder in shown:
        real = Path(os.path.realpath(folder)) if os.path.isabs(folder) else None
        if real is not None and real != PRIVATE_TMP and base.is_relative_to(real):
            return False
    return True


def _figures(agent: AgentResult, prices: Mapping[str, Price], changed: tuple[str, ...]) -> dict[str, object]:
    usage = agent.final_usage
    cost = cost_of(usage, prices) if usage is not None and usage.total >= agent.tokens else None
    return {
        "requests": agent.requests,
        "prompt_tokens": max(agent.prompt_tokens, usage.prompt_tokens if usage else 0),
        "completion_tokens": max(agent.completion_tokens, usage.completion_tokens if usage else 0),
        "cost": None if cost is None else round(cost, 6),
        "wall_s": round(agent.wall_s, 3),
        "replans": agent.replans,
        "files_changed": changed,
    }


def _timed(record: RunRecord, began: float, measured: float) -> RunRecord:
    """`harness_s`: the run's time but the agent's, the check's and the setup's (`measured`)."""
    return record.model_copy(update={"harness_s": round(max(0.0, time.monotonic() - began - measured), 3)})


def _clean(setup: EvalSetup, index: int, work: Path) -> None:
    """The run's folders, and what paicli kept of its workspace under ~/.paicli (conversations, checkpoints
    and their lock, the repository map's index)."""
    checkpoints = store_folder(setup.home, work)
    for path in (sessions_folder(setup.home, work), checkpoints, index_folder(setup.home, work)):
        shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        checkpoints.with_name(checkpoints.name + ".lock").unlink()
    for name in ("runs", "checks"):
        shutil.rmtree(setup.base / name / str(index), ignore_errors=True)
