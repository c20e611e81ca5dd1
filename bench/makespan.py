"""1. Makespan vs critical path: how close each scheduling mode comes to the best possible finish time.

Four DAGs whose task latencies the fake server injects (routed by task id): a diamond, a fan-out of 16
into a join, three skewed chains (chain i has its slow task at level i) and a random layered DAG of 30
tasks with lognormal latencies. The plans run as `paicli plan` runs them: a ReAct loop per task, the
real client, and the plan saved to .paicli/plans (the changes of one loop turn together, written in a
worker thread; the makespan ends when the last save is on disk, as `paicli plan` ends).

Modes: eager and batch with unbounded parallelism, eager without saving the plan (to show what saving
costs), sequential (`--max-parallel 1`), and eager with 2 and 4 slots. Ratios: makespan ÷ critical path
(CP, from the injected latencies), and for 2 and 4 slots makespan ÷ Graham's bound W/m + CP (W: total
work). Eager with and without saving run in every round (the table shows the median); the others, which
take longer and have no tight target, run in the first round only.

Also, computed (no run): what ordering every COMMAND and VERIFICATION task without `files` against
every writer would cost, the alternative to running such tasks with the workspace read-only in the
sandbox (issue 29, docs/plan-mode.md#decisions). Each DAG is typed 20 times at random (a share of
commands without files, of writers of a file of their own, the rest reads); the ratio is the critical
path with the commands ordered like writers that may write anywhere (`order_unbounded`) over the
critical path as planned, unbounded parallelism, the median of the 20 typings.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.common import Result, median, rounded
from bench.fakeserver import ServerProcess
from bench.graphs import Graph, Latencies, diamond, fan_out_join, random_layered, skewed_chains
from bench.harness import Schedule, TimedRunner, assert_completed, make_plan, react_runner, run_plan, runtime_for
from paicli.plan import dag
from paicli.plan.model import Plan, Task, TaskType
from paicli.plan.write_sets import order_unbounded
from paicli.runtime import Runtime

NAME = "makespan"
TITLE = "Makespan vs critical path"


@dataclass(frozen=True)
class Mode:
    label: str
    schedule: Schedule
    slots: int | None  # None: one per task (unbounded parallelism)
    every_round: bool
    save: bool = True


MODES = [
    Mode("eager", "eager", None, every_round=True),
    Mode("batch", "batch", None, every_round=False),
    Mode("eager, no saving", "eager", None, every_round=True, save=False),
    Mode("sequential", "eager", 1, every_round=False),
    Mode("eager m=2", "eager", 2, every_round=False),
    Mode("eager m=4", "eager", 4, every_round=False),
]
DAGS: dict[str, Callable[[], tuple[Graph, Latencies]]] = {
    "diamond": diamond,
    "fan-out 16": fan_out_join,
    "skewed chains": skewed_chains,
    "random 30": random_layered,
}


def run(quick: bool = False) -> Result:
    scale, rounds = (0.05, 1) if quick else (1.0, 3)
    chosen = ["diamond", "skewed chains"] if quick else list(DAGS)
    return asyncio.run(_run(chosen, scale, rounds))


async def _run(chosen: list[str], scale: float, rounds: int) -> Result:
    dags = {}
    for name in chosen:
        graph, latencies = DAGS[name]()
        dags[name] = graph, {task: seconds * scale for task, seconds in latencies.items()}
    makespans: dict[tuple[str, str], list[float]] = {(d, m.label): [] for d in dags for m in MODES}
    measured_cp: dict[str, list[float]] = {d: [] for d in dags}
    routes = {task: seconds for _graph, latencies in dags.values() for task, seconds in latencies.items()}
    with ServerProcess(routes) as server, tempfile.TemporaryDirectory() as folder:
        async with runtime_for(server.base_url, Path(folder)) as runtime:
            await _makespan(runtime, {"warm-up": []}, MODES[0])  # the first connection, cold code paths
            for number in range(rounds):
                for name, (graph, _latencies) in dags.items():
                    for mode in MODES:
                        if number and not mode.every_round:
                            continue
                        seconds, durations = await _makespan(runtime, graph, mode)
                        makespans[(name, mode.label)].append(seconds)
                        if mode.label == "eager":
                            measured_cp[name].append(dag.critical_path(graph, durations)[0])
    result = Result(NAME, TITLE, details={"latency_scale": scale, "rounds": rounds})
    for name, (graph, latencies) in dags.items():
        cp = dag.critical_path(graph, latencies)[0]
        work = sum(latencies.values())
        span = {mode.label: median(makespans[(name, mode.label)]) for mode in MODES}
        result.add(f"{name}: eager ÷ CP", span["eager"] / cp, at_most=1.05)
        result.add(f"{name}: batch ÷ CP", span["batch"] / cp)
        result.add(f"{name}: eager, no saving ÷ CP", span["eager, no saving"] / cp)
        result.add(f"{name}: sequential ÷ CP", span["sequential"] / cp)
        for slots in (2, 4):
            result.add(
                f"{name}: eager m={slots} ÷ (W/{slots} + CP)",
                span[f"eager m={slots}"] / (work / slots + cp),
                at_most=1.0,
            )
        result.details[name] = {
            "tasks": len(graph),
            "critical_path_s": rounded(cp),
            "work_s": rounded(work),
            "critical_path_of_measured_task_times_s": rounded(median(measured_cp[name])),
            "makespans_s": {mode.label: [rounded(s) for s in makespans[(name, mode.label)]] for mode in MODES},
        }
    _ordering_commands(result)
    return result


COMMAND_MIXES = {"20 % commands, 40 % writers": (0.2, 0.4), "1/3 commands, 1/3 writers": (1 / 3, 1 / 3)}


def _ordering_commands(result: Result) -> None:
    """The computed cost of ordering commands without files against every writer (the module docstring)."""
    for name, make in DAGS.items():
        graph, latencies = make()
        for mix, (commands, writers) in COMMAND_MIXES.items():
            ratios = []
            for seed in range(20):
                plan = _typed(graph, random.Random(seed), commands, writers)
                planned = dag.critical_path(plan.graph(), latencies)[0]
                unbounded = [t for t in plan.tasks if t.type is TaskType.VERIFICATION]
                order_unbounded(plan, unbounded, [t for t in plan.tasks if t.files is not None])
                ratios.append(dag.critical_path(plan.graph(), latencies)[0] / planned)
            result.add(f"{name}: commands ordered against writers, {mix}: CP ÷ CP as planned", median(ratios))


def _typed(graph: Graph, rng: random.Random, commands: float, writers: float) -> Plan:
    tasks = []
    for task_id, deps in graph.items():
        draw = rng.random()
        if draw < commands:
            tasks.append(Task(id=task_id, description="check", type=TaskType.VERIFICATION, dependencies=list(deps)))
        elif draw < commands + writers:
            kind, files = TaskType.FILE_WRITE, [f"{task_id}.py"]
            tasks.append(Task(id=task_id, description="write", type=kind, files=files, dependencies=list(deps)))
        else:
            tasks.append(Task(id=task_id, description="read", type=TaskType.FILE_READ, dependencies=list(deps)))
    return Plan(goal="g", tasks=tasks)


async def _makespan(runtime: Runtime, graph: Graph, mode: Mode) -> tuple[float, dict[str, float]]:
    plan = make_plan(graph)
    runner = TimedRunner(react_runner(runtime))
    start = time.monotonic()
    await run_plan(runtime, runner, plan, max_parallel=mode.slots or len(graph), schedule=mode.schedule, save=mode.save)
    seconds = time.monotonic() - start
    assert_completed(plan)
    return seconds, {task: end - begin for task, (begin, end) in runner.spans.items()}
