"""3. Scheduler overhead: what running a task costs beyond its HTTP round trip, on 2,000-task DAGs.

Three shapes of 2,000 tasks: wide (all independent), 20 chains of 100, and a 40 × 50 lattice (each cell
after the cell above and the one to its left), under the default `--max-parallel 4`.

- scheduler alone: every task returns at once (no HTTP), without saving the plan: wall and CPU time per
  task of the Scheduler itself. Three rounds, median.
- full stack: the lattice with a ReAct loop per task and the real client against the fake server
  (zero latency), without saving, against the same number of bare `LLMClient.chat` calls with the same
  messages and tools, four at a time, in the same run. The difference per task is what paicli adds
  beyond the round trip (task brief, ReAct loop set-up, scheduling).
- saving: `paicli plan` saves the plan (JSON + Markdown, fsynced) on every change, twice per task.
  One save of a 50-task and of a 2,000-task plan is timed (the full 2,000-task run with saving would
  write about 4,000 ever larger files).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.common import Result, Stopwatch, median, rounded
from bench.fakeserver import ServerProcess
from bench.graphs import Graph, chains, lattice, random_layered, wide
from bench.harness import assert_completed, make_plan, react_runner, runtime_for, scheduler_for
from paicli.events import NullSink
from paicli.llm.types import Message, ToolSpec
from paicli.plan.executor import task_messages
from paicli.plan.model import Plan, Task, TaskStatus
from paicli.plan.scheduler import Scheduler
from paicli.plan.store import PlanRecorder, PlanStore
from paicli.runtime import Runtime

NAME = "overhead"
TITLE = "Scheduler overhead per task"
SLOTS = 4


async def _instant(plan: Plan, task: Task) -> str:
    return "done"


def run(quick: bool = False) -> Result:
    size = 100 if quick else 2000
    rounds = 1 if quick else 3
    shapes: dict[str, Graph] = {
        "wide": wide(size),
        "chains": chains(size // 100, 100) if size >= 100 else chains(1, size),
        "lattice": lattice(size // 50, 50),
    }
    return asyncio.run(_run(shapes, rounds, quick))


async def _run(shapes: dict[str, Graph], rounds: int, quick: bool) -> Result:
    result = Result(NAME, TITLE, details={"slots": SLOTS, "rounds": rounds})
    for name, graph in shapes.items():
        walls, cpus = [], []
        for _ in range(rounds):
            plan = make_plan(graph)
            with Stopwatch() as watch:
                await Scheduler(_instant, NullSink(), max_parallel=SLOTS).run(plan)
            assert_completed(plan)
            walls.append(watch.wall / len(graph))
            cpus.append(watch.cpu / len(graph))
        result.add(f"scheduler alone, {name}: wall per task", median(walls) * 1000, "ms", at_most=1.0)
        result.add(f"scheduler alone, {name}: CPU per task", median(cpus) * 1000, "ms", at_most=1.0)
        result.details[f"scheduler_alone_{name}"] = {"tasks": len(graph), "wall_ms_per_task": _ms(walls)}

    lattice_graph = shapes["lattice"]
    with ServerProcess() as server, tempfile.TemporaryDirectory() as folder:
        async with runtime_for(server.base_url, Path(folder)) as runtime:
            tools = runtime.tools.specs()
            await _bare_calls(runtime, _requests(runtime, make_plan({"warm": []})), tools)  # opens a connection
            plan = make_plan(lattice_graph)
            with Stopwatch() as full:
                await scheduler_for(runtime, react_runner(runtime), max_parallel=SLOTS, save=False).run(plan)
            assert_completed(plan)
            requests = _requests(runtime, plan)
            with Stopwatch() as bare:
                await _bare_calls(runtime, requests, tools)
    count = len(lattice_graph)
    result.add(
        "full stack, lattice: wall per task beyond a bare call",
        (full.wall - bare.wall) / count * 1000,
        "ms",
        at_most=1.0,
    )
    result.add(
        "full stack, lattice: CPU per task beyond a bare call", (full.cpu - bare.cpu) / count * 1000, "ms", at_most=1.0
    )
    result.add("bare call (4 at a time): wall per call", bare.wall / count * 1000, "ms")
    result.details["full_stack_lattice"] = {
        "tasks": count,
        "full_wall_s": rounded(full.wall),
        "full_cpu_s": rounded(full.cpu),
        "bare_wall_s": rounded(bare.wall),
        "bare_cpu_s": rounded(bare.cpu),
    }

    with tempfile.TemporaryDirectory() as folder:
        for tasks in (50, 200 if quick else 2000):
            seconds = _save_seconds(Path(folder), tasks, 3 if quick else 5)
            result.add(f"saving a {tasks}-task plan (twice per task)", seconds * 1000, "ms")
            result.details[f"save_{tasks}_tasks_ms"] = rounded(seconds * 1000)
    return result


def _requests(runtime: Runtime, plan: Plan) -> list[list[Message]]:
    """The first request of every task of a finished plan: what the bare calls send."""
    system = runtime.system_prompt("executor")
    return [task_messages(system, plan, task) for task in plan.tasks]


async def _bare_calls(runtime: Runtime, requests: list[list[Message]], tools: list[ToolSpec]) -> None:
    """One chat call per request, SLOTS at a time."""
    pending = iter(requests)

    async def worker() -> None:
        for messages in pending:
            await runtime.llm.chat(messages, tools=tools)

    await asyncio.gather(*(worker() for _ in range(SLOTS)))


def _save_seconds(folder: Path, tasks: int, repeats: int) -> float:
    graph = random_layered(tasks, layers=max(1, tasks // 8))[0]
    plan = make_plan(graph)
    for task in plan.tasks:
        task.status, task.result = TaskStatus.COMPLETED, f"finished {task.id}: " + "result text " * 20
    recorder = PlanRecorder(PlanStore(folder))
    recorder(plan)
    times = []
    for _ in range(repeats):
        with Stopwatch() as watch:
            recorder(plan)
        times.append(watch.wall)
    return median(times)


def _ms(values: list[float]) -> list[float]:
    return [rounded(v * 1000) for v in values]
