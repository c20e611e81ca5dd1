"""3. Scheduler overhead: what running a task costs beyond its HTTP round trip, on 2,000-task DAGs.

Three shapes of 2,000 tasks: wide (all independent), 20 chains of 100, and a 40 × 50 lattice (each cell
after the cell above and the one to its left), under the default `--max-parallel 4`.

- scheduler alone: every task returns at once (no HTTP), without saving the plan: wall and CPU time per
  task of the Scheduler itself. Three rounds, median.
- full stack: the lattice with a ReAct loop per task and the real client against the fake server
  (zero latency), without saving, against the same number of bare `LLMClient.chat` calls with the same
  messages and tools, four at a time, in the same run. The difference per task is what paicli adds
  beyond the round trip (task brief, ReAct loop set-up, scheduling).
- saving: `paicli plan` saves the plan (JSON + Markdown) after every loop turn in which it changed. The
  PlanRecorder renders both texts on the event loop (the snapshot) and writes them, fsynced, in a worker
  thread, off the loop. Both parts are timed separately for a finished 50-task and 2,000-task plan: the
  snapshot as the recorder makes it (PlanRecord, its JSON, render_markdown) and `PlanStore.write`.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import Result, Stopwatch, median, rounded
from bench.fakeserver import ServerProcess
from bench.graphs import Graph, chains, lattice, random_layered, wide
from bench.harness import assert_completed, make_plan, react_runner, run_plan, runtime_for
from paicli.common.events import NullSink
from paicli.common.values import Usage
from paicli.llm.types import Message, ToolSpec
from paicli.plan.executor import task_messages
from paicli.plan.model import Plan, Task, TaskStatus
from paicli.plan.saved_plans import PlanRecord, PlanStore, render_markdown
from paicli.plan.scheduler import Scheduler
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
                await run_plan(runtime, react_runner(runtime), plan, max_parallel=SLOTS, save=False)
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
            snapshot, write = _save_seconds(Path(folder), tasks, 3 if quick else 5)
            result.add(f"saving a {tasks}-task plan: snapshot, on the loop", snapshot * 1000, "ms")
            result.add(f"saving a {tasks}-task plan: write, in a worker thread", write * 1000, "ms")
            result.details[f"save_{tasks}_tasks_ms"] = {
                "snapshot_on_loop": rounded(snapshot * 1000),
                "write_off_loop": rounded(write * 1000),
            }
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


def _save_seconds(folder: Path, tasks: int, repeats: int) -> tuple[float, float]:
    """Medians of one save's two parts: the snapshot the PlanRecorder renders on the event loop once per
    loop turn with a change, and the `PlanStore.write` of both files (four fsyncs) it runs off the loop."""
    graph = random_layered(tasks, layers=max(1, tasks // 8))[0]
    plan = make_plan(graph)
    for task in plan.tasks:
        task.status, task.result = TaskStatus.COMPLETED, f"finished {task.id}: " + "result text " * 20
    store = PlanStore(folder)
    plan_id = store.new_id(plan.goal)
    store.write(plan_id, "{}", "")  # creates the folder
    snapshots, writes = [], []
    for _ in range(repeats):
        with Stopwatch() as snapshot:
            record = PlanRecord(id=plan_id, created_at=0.0, updated_at=time.time(), plan=plan, usage=Usage())
            texts = record.model_dump_json(indent=2), render_markdown(record)
        with Stopwatch() as write:
            store.write(plan_id, *texts)
        snapshots.append(snapshot.wall)
        writes.append(write.wall)
    return median(snapshots), median(writes)


def _ms(values: list[float]) -> list[float]:
    return [rounded(v * 1000) for v in values]
