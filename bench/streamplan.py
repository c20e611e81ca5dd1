"""Streamed planning: how much of the planner's reply early start hides (issue 33).

The fake server (bench/fakeserver.py, its own process) streams a planner reply of about 2,000 tokens at 30,
80 and 200 tokens a second, one token (4 characters) at a time in chunks of 16. The plan it holds has a
fixed shape: 8 model-driven reads (FILE_READ, no direct action: a direct read takes milliseconds and gains
nothing), 3 writers each depending on some of them, 1 verification depending on the writers; every task
request is answered 3 s after it arrives (the summary at once). The plan runs as `paicli plan --yes` runs
it (`build_plan_session`: the real planner, stream parser, early start, scheduler with `max_parallel` 4,
ReAct loops, client and plan saving), once today's way (the plan validated, then run) and once with
`--early`, against the same server process.

Reported per rate and mode: the time from the planner's request to the first task request reaching the
server; for early start, the lag from the moment a read's object was complete in the client (its
`plan_task_streamed`) to its request reaching the server (the first read, and the largest of the 8); the
makespan (the planner's request to `plan_finished`); the makespan ÷ (whole reply + critical path), where
the whole reply is the planner request's measured time and the critical path 3 × 3 s (read, writer,
verification); and early ÷ today. Both modes must send the same task requests (what the plan does does not
change). Targets: the first read within 50 ms of its object's end; at 80 tokens a second, early ≤ 0.8 ×
today.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Result, rounded
from bench.fakeserver import Route, ServedRequest, ServerProcess
from bench.harness import runtime_for
from paicli.common.events import AnyEvent, PlanFinished, PlanTaskStreamed
from paicli.plan.model import PlanStatus
from paicli.plan_wiring import build_plan_session
from paicli.runtime import Runtime

NAME = "streamplan"
TITLE = "Streamed planning: early start of reads"
RATES = (30, 80, 200)  # tokens a second
REPLY_TOKENS = 2_000
CHARS_PER_TOKEN = 4
TOKENS_PER_CHUNK = 4
TASK_LATENCY = 3.0
PLANNER, SUMMARIZER = "# Mode: planning", "# Mode: writing the final answer"
READS = [f"r{n}" for n in range(1, 9)]
WRITERS = {"w1": READS[0:3], "w2": READS[3:6], "w3": READS[6:8]}


def planner_reply(tokens: int) -> str:
    """The plan as JSON of about `tokens` tokens: descriptions padded to share the length evenly."""
    tasks: list[dict[str, object]] = [
        {"id": read, "description": f"Read src/module_{read}.py and report its public functions", "type": "FILE_READ"}
        for read in READS
    ]
    tasks += [
        {
            "id": writer,
            "description": f"Change src/{writer}.py using what the reads found",
            "type": "FILE_WRITE",
            "dependencies": reads,
            "files": [f"src/{writer}.py"],
        }
        for writer, reads in WRITERS.items()
    ]
    tasks.append({"id": "v", "description": "Run the tests", "type": "VERIFICATION", "dependencies": list(WRITERS)})
    for task in tasks:
        task.setdefault("dependencies", [])
    bare = json.dumps({"summary": "s", "tasks": tasks})
    padding = max(0, tokens * CHARS_PER_TOKEN - len(bare)) // len(tasks)
    for task in tasks:
        task["description"] = f"{task['description']}; " + ("details " * (padding // 8 + 1))[:padding]
    return json.dumps({"summary": "Read the modules, change three files, run the tests", "tasks": tasks})


@dataclass
class Run:
    makespan: float
    reply: float  # the planner request's time at the server
    first_start: float  # the planner's request to the first task request at the server
    lags: dict[str, float]  # read id → its request's arrival after its object was complete in the client
    requests: list[str]  # the task requests the server saw, sorted


class Clock:
    """A sink that notes (time.monotonic) when each task's object was complete, and when the plan ended."""

    def __init__(self) -> None:
        self.streamed: dict[str, float] = {}
        self.finished: PlanFinished | None = None
        self.ended = 0.0

    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, PlanTaskStreamed):
            self.streamed.setdefault(event.task.id, time.monotonic())
        elif isinstance(event, PlanFinished):
            self.finished, self.ended = event, time.monotonic()


def run(quick: bool = False) -> Result:
    scale = 0.02 if quick else 1.0
    rates = RATES[1:2] if quick else RATES
    return asyncio.run(_run(rates, scale))


async def _run(rates: tuple[int, ...], scale: float) -> Result:
    result = Result(NAME, TITLE, details={"latency_scale": scale, "reply_tokens": REPLY_TOKENS, "max_parallel": 4})
    content = planner_reply(REPLY_TOKENS)
    result.details["reply_chars"] = len(content)
    critical_path = 3 * TASK_LATENCY * scale
    for rate in rates:
        chunk = CHARS_PER_TOKEN * TOKENS_PER_CHUNK
        delay = TOKENS_PER_CHUNK / rate * scale
        routes = [Route(PLANNER, content, chunk=chunk, chunk_delay=delay), Route(SUMMARIZER, "All done.")]
        runs: dict[str, Run] = {}
        with ServerProcess(default_latency=TASK_LATENCY * scale, routes=routes) as server:
            for early in (False, True):
                with tempfile.TemporaryDirectory() as folder:
                    async with runtime_for(server.base_url, Path(folder), review=False) as runtime:
                        runs["early" if early else "today"] = await _plan(runtime, server, early)
        today, early_run = runs["today"], runs["early"]
        if today.requests != early_run.requests:
            raise RuntimeError(f"early start changed what the plan did: {today.requests} != {early_run.requests}")
        label = f"{rate} tok/s"
        result.add(f"{label}: first task started, today", today.first_start, "s")
        result.add(f"{label}: first task started, early", early_run.first_start, "s")
        first_read = min(early_run.lags, key=lambda read: early_run.lags[read] + _streamed_order(read))
        result.add(f"{label}: first read after its object", early_run.lags[first_read] * 1000, "ms", at_most=50)
        result.add(f"{label}: slowest read after its object", max(early_run.lags.values()) * 1000, "ms")
        result.add(f"{label}: makespan today", today.makespan, "s")
        result.add(f"{label}: makespan early", early_run.makespan, "s")
        for name, one in runs.items():
            result.add(f"{label}: {name} ÷ (reply + CP)", one.makespan / (one.reply + critical_path))
        ratio = early_run.makespan / today.makespan
        result.add(f"{label}: early ÷ today", ratio, at_most=0.8 if rate == 80 else None)
        result.details[label] = {
            name: {
                "makespan_s": rounded(one.makespan),
                "reply_s": rounded(one.reply),
                "first_task_s": rounded(one.first_start),
                "read_lags_ms": {read: rounded(lag * 1000) for read, lag in sorted(one.lags.items())},
            }
            for name, one in runs.items()
        }
    return result


def _streamed_order(read: str) -> float:
    return READS.index(read) * 1e6  # the first read in the reply, whatever its lag


async def _plan(runtime: Runtime, server: ServerProcess, early: bool) -> Run:
    clock = Clock()
    session = build_plan_session(runtime, clock, early=early)
    before = len(server.requests())  # one server for both modes: this run's requests come after
    start = time.monotonic()
    outcome = await session.run("change three files after reading eight modules")
    if outcome.status is not PlanStatus.COMPLETED:
        raise RuntimeError(f"the benchmark plan did not complete: {outcome.failure}")
    served = server.requests()[before:]
    planner = next(r for r in served if r.system.startswith(PLANNER))
    tasks = [r for r in served if r.task_id is not None]
    arrived = {r.task_id: r.started for r in tasks if r.task_id is not None}
    return Run(
        makespan=clock.ended - start,
        reply=planner.finished - planner.started,
        first_start=min(r.started for r in tasks) - start,
        lags={read: arrived[read] - clock.streamed[read] for read in READS if early},
        requests=sorted(_name(r) for r in tasks),
    )


def _name(request: ServedRequest) -> str:
    return f"{request.task_id} {request.status}"
