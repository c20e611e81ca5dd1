"""2. Dispatch lag: from a dependency's completion to its dependent's first request reaching the server.

Two shapes of short tasks (5 to 25 ms each) under the default `--max-parallel 4`, so every dispatch waits
on a dependency and never on a free slot: one chain of 40 tasks (nothing else runs: the lag of an idle
client) and four chains of 25 with joins between neighbouring chains (the client is busy with the other
chains' streams meanwhile, as in real plans). Each runs as `paicli plan` runs it, saving the plan to
.paicli/plans (once per loop turn, written in a worker thread), and without saving, in the same rounds.
For each dependent, the clock starts when the server finished sending the reply of its last-finishing
dependency and stops when the server has read the dependent's first request. The lag is split into its parts:

  reply tail   server done → the dependency's task runner returns (stream end, result)
  scheduler    → the dependent's task runner starts (wake-up, bookkeeping, dispatch)
  request      → its request is handed to httpx2 (ReAct loop set-up, messages, JSON)
  send         → the server has the request (httpx2, loopback, the fake's HTTP parsing)

For scale, the same run times bare round trips: `LLMClient.chat` with a task's messages and tools, one
at a time, zero latency (from handing the request over to the last byte of the reply).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path

from bench.common import Result, median, percentile, rounded
from bench.fakeserver import ServedRequest, ServerProcess
from bench.graphs import Graph, Latencies, chain, crossed_chains
from bench.harness import (
    RequestClock,
    TimedRunner,
    assert_completed,
    make_plan,
    react_runner,
    run_plan,
    runtime_for,
)
from paicli.plan.executor import task_messages
from paicli.runtime import Runtime

NAME = "dispatch"
TITLE = "Dispatch lag"
PHASES = ("reply tail", "scheduler", "request", "send")


def run(quick: bool = False) -> Result:
    # ten rounds: about 400 dispatches per variant, so that the p99 is not the second-largest of a hundred
    chain_length, chains, length, rounds = (4, 2, 3, 1) if quick else (40, 4, 25, 10)
    rng = random.Random(40)
    single = chain(chain_length)
    shapes: dict[str, tuple[Graph, Latencies]] = {
        "1 chain": (single, {task: round(rng.uniform(0.005, 0.025), 4) for task in single}),
        f"{chains} chains": crossed_chains(chains, length),
    }
    return asyncio.run(_run(shapes, rounds))


async def _run(shapes: dict[str, tuple[Graph, Latencies]], rounds: int) -> Result:
    result = Result(NAME, TITLE, details={"rounds": rounds})
    routes = {task: seconds for _graph, latencies in shapes.values() for task, seconds in latencies.items()}
    variants = [(shape, save) for shape in shapes for save in (True, False)]
    totals: dict[tuple[str, bool], list[float]] = {variant: [] for variant in variants}
    phases = {variant: {phase: list[float]() for phase in PHASES} for variant in variants}
    with ServerProcess(routes) as server, tempfile.TemporaryDirectory() as folder:
        clock = RequestClock()
        async with runtime_for(server.base_url, Path(folder), clock) as runtime:
            round_trips = await _round_trips(runtime, 50 if rounds > 1 else 3)
            for _ in range(rounds):
                for shape, save in variants:
                    for total, parts in await _one_round(runtime, server, clock, shapes[shape][0], save):
                        totals[(shape, save)].append(total)
                        for phase, value in zip(PHASES, parts, strict=True):
                            phases[(shape, save)][phase].append(value)
    bare = median(round_trips) * 1000
    for (shape, save), lags in totals.items():
        label = f"{shape}, {'plan saved' if save else 'no saving'}"
        result.add(f"{label}: lag p50", percentile(lags, 50) * 1000, "ms")
        result.add(f"{label}: lag p99", percentile(lags, 99) * 1000, "ms")
        beyond = percentile(lags, 99) * 1000 - bare  # issue 16: p99 beyond one bare round trip of the same run
        target = 2.0 if shape == "1 chain" else 5.0
        result.add(f"{label}: lag p99 beyond a bare round trip", beyond, "ms", at_most=target)
        result.add(f"{label}: p99 of tail / scheduler / request / send", _phase_p99s(phases[(shape, save)]), "ms")
        result.details[label] = {
            "tasks": len(shapes[shape][0]),
            "dispatches": len(lags),
            "lag_ms": _summary(lags),
            **{f"{phase}_ms": _summary(values) for phase, values in phases[(shape, save)].items()},
        }
    result.add("bare round trip p50 (for scale)", bare, "ms")
    result.details["bare_round_trip_ms"] = _summary(round_trips)
    return result


async def _round_trips(runtime: Runtime, count: int) -> list[float]:
    """Bare `chat` calls with a task's messages and tools; the first one opens the connection (not counted)."""
    plan = make_plan({"probe": []})
    messages = task_messages(runtime.system_prompt("executor"), plan, plan.tasks[0])
    tools = runtime.tools.specs()
    seconds = []
    for _ in range(count + 1):
        start = time.perf_counter()
        await runtime.llm.chat(messages, tools=tools)
        seconds.append(time.perf_counter() - start)
    return seconds[1:]


async def _one_round(
    runtime: Runtime, server: ServerProcess, clock: RequestClock, graph: Graph, save: bool
) -> list[tuple[float, tuple[float, ...]]]:
    clock.sent.clear()
    seen = len(server.requests())
    runner = TimedRunner(react_runner(runtime))
    plan = make_plan(graph)
    await run_plan(runtime, runner, plan, max_parallel=4, save=save)
    assert_completed(plan)
    return _lags(graph, server.requests()[seen:], runner, clock)


def _lags(
    graph: Graph, served: list[ServedRequest], runner: TimedRunner, clock: RequestClock
) -> list[tuple[float, tuple[float, ...]]]:
    first_arrival: dict[str, float] = {}
    last_finish: dict[str, float] = {}
    for request in served:
        if request.task_id is None:
            continue
        first_arrival.setdefault(request.task_id, request.started)
        last_finish[request.task_id] = max(last_finish.get(request.task_id, 0.0), request.finished)
    lags = []
    for task, deps in graph.items():
        if not deps:
            continue
        blocker = max(deps, key=lambda dep: last_finish[dep])
        server_done = last_finish[blocker]
        runner_returned = runner.spans[blocker][1]
        runner_started = runner.spans[task][0]
        handed_over = clock.sent[task][0]
        arrived = first_arrival[task]
        parts = (
            runner_returned - server_done,
            runner_started - runner_returned,
            handed_over - runner_started,
            arrived - handed_over,
        )
        lags.append((arrived - server_done, parts))
    return lags


def _phase_p99s(phases: dict[str, list[float]]) -> str:
    return " / ".join(f"{percentile(values, 99) * 1000:.1f}" for values in phases.values())


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": rounded(percentile(values, 50) * 1000),
        "p90": rounded(percentile(values, 90) * 1000),
        "p99": rounded(percentile(values, 99) * 1000),
        "max": rounded(max(values) * 1000) if values else float("nan"),
    }
