"""The agent of one run: `paicli plan GOAL --yes --json --no-review` or `paicli run GOAL --json` as a
subprocess in the run's copy, in its own process group, read event by event.

The time limit ends the whole process group (SIGTERM, then SIGKILL after a grace): `timeout`. Each
`usage` event (one per model request) adds to the run's tokens; past the task's token limit the agent is
stopped the same way: `over_budget`. What the events say (requests, tokens, replans, the final usage by
model for the cost) is gathered in `AgentResult`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from paicli.common.values import Usage
from paicli.eval.records import Mode

GRACE = 5.0  # seconds between SIGTERM and SIGKILL
LINE_LIMIT = 64 << 20  # one JSON event line (a tool result holds a whole file)
STDERR_TAIL = 4000

Ending = Literal["exited", "timeout", "over_budget", "cancelled"]


@dataclass
class AgentResult:
    ending: Ending = "exited"
    exit_code: int | None = None
    requests: int = 0
    planning_requests: int = 0  # requests before the plan was approved (plan_finished counts those after)
    approved: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replans: int = 0
    final_usage: Usage | None = None  # from plan_finished / run_finished: split by model, for the cost
    wall_s: float = 0.0
    stderr_tail: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def last_error(self) -> str:
        """The agent's last line on stderr (its one-line error), for a record's `error`."""
        lines = [line.strip() for line in self.stderr_tail.splitlines() if line.strip()]
        return lines[-1][:300] if lines else f"paicli exited with {self.exit_code}"


def agent_argv(
    mode: Mode, goal: str, work: Path, model: str | None, passed: Sequence[str], sandboxed: bool, hide: Sequence[Path]
) -> list[str]:
    """The headless command line of one run: the same code paths as `paicli plan --yes` and `paicli run`,
    approvals `yolo` (commands are contained), and the global options the user gave `eval`."""
    argv = [sys.executable, "-m", "paicli", "-C", str(work), *passed, "--approval", "yolo"]
    argv += ["--sandbox", "bwrap" if sandboxed else "off"]
    for path in hide:
        argv += ["--sandbox-hide", str(path)]
    if model:
        argv += ["--model", model]
    if mode == "plan":
        return [*argv, "plan", "--yes", "--json", "--no-review", "--", goal]
    return [*argv, "run", "--json", "--", goal]


async def run_agent(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], time_limit: float, token_limit: int
) -> AgentResult:
    """Runs the agent to its end, its time limit or its token limit. Cancelled (Ctrl+C), it ends the
    agent's process group before the cancellation goes on."""
    result = AgentResult()
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=LINE_LIMIT,
    )
    over = asyncio.Event()
    stderr_task = asyncio.create_task(_tail(process.stderr, result))
    events_task = asyncio.create_task(_events(process.stdout, result, token_limit, over))
    exited = asyncio.create_task(process.wait())
    over_task = asyncio.create_task(over.wait())
    try:
        done, _ = await asyncio.wait({exited, over_task}, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        if exited not in done:
            result.ending = "over_budget" if over_task in done else "timeout"
            await stop(process)
    except asyncio.CancelledError:
        result.ending = "cancelled"
        await asyncio.shield(stop(process))
        raise
    finally:
        over_task.cancel()
        result.wall_s = time.monotonic() - started
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({stderr_task, events_task}, timeout=GRACE)
        for task in (stderr_task, events_task, exited):
            task.cancel()
    result.exit_code = process.returncode
    _signal_group(process.pid, signal.SIGKILL)  # what the agent left running in its group (unsandboxed: `cmd &`)
    return result


async def stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the agent's process group (paicli cancels, its commands' groups and sandboxes end with
    it), SIGKILL to what is left after GRACE."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), GRACE)
    _signal_group(process.pid, signal.SIGKILL)  # also whatever of the group outlived paicli
    await process.wait()


def _signal_group(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


async def _tail(stream: asyncio.StreamReader | None, result: AgentResult) -> None:
    if stream is None:
        return
    while chunk := await stream.read(1 << 16):
        result.stderr_tail = (result.stderr_tail + chunk.decode("utf-8", "replace"))[-STDERR_TAIL:]


async def _events(
    stream: asyncio.StreamReader | None, result: AgentResult, token_limit: int, over: asyncio.Event
) -> None:
    if stream is None:
        return
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line over LINE_LIMIT: skipped
            continue
        if not line:
            return
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            take(event, result)
            if result.tokens > token_limit:
                over.set()


def take(event: dict[str, Any], result: AgentResult) -> None:
    """What one JSON event adds to the result."""
    kind = event.get("event")
    if kind == "usage":
        usage = _usage(event.get("usage"))
        if usage is not None:
            result.requests += 1
            result.planning_requests += not result.approved
            result.prompt_tokens += usage.prompt_tokens
            result.completion_tokens += usage.completion_tokens
    elif kind == "plan_approved":
        result.approved = True
    elif kind == "replan":
        result.replans += 1
    elif kind in ("plan_finished", "run_finished"):
        result.final_usage = _usage(event.get("usage"))
        after = event.get("requests")  # plan_finished: the requests after approval, the summary's too
        if isinstance(after, int) and not isinstance(after, bool) and 0 <= after < 1_000_000:
            result.requests = max(result.requests, result.planning_requests + after)


def _usage(raw: object) -> Usage | None:
    try:
        return Usage.model_validate(raw)
    except ValueError:
        return None
