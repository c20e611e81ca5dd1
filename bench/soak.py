"""11. Fault soak (issue 18): a 30-task plan against a server that fails a quarter of its requests.

The fake model server (tests/fakellm.py, in-process) answers 25 % of the requests, drawn with a fixed seed,
with a fault instead of the task's reply: 429 with `Retry-After: 0.2`, 500, 503, a stream dropped after two
chunks, or a stream that hangs after one (the client's read timeout, 0.5 s here, ends it). The draw depends
on the seed and the request itself, not on arrival order, so every run meets the same faults. Each task
reads its own file (one tool call), then answers a fixed text; the plan is the random layered DAG of the
makespan benchmark (30 tasks, 6 layers), eight at a time, through one client and one endpoint (rate gate
and adaptive concurrency), as `paicli plan` runs it. The same plan runs once without faults.

Reported: completion rate (target 100 %), makespan with faults ÷ makespan without, tool calls run more
than once for a task (target 0: a reply's calls run only after the whole reply arrived), task results
that are not the task's whole answer (target 0), and the retries by kind.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from pydantic import SecretStr

from bench.common import Result, rounded
from bench.graphs import random_layered
from bench.harness import make_plan
from paicli.common.events import ListSink, ToolResultEvent
from paicli.config import Settings
from paicli.llm.client import LLMClient
from paicli.llm.endpoint import Endpoint
from paicli.llm.meter import MeteredModel
from paicli.llm.retry import Backoff
from paicli.plan.executor import ReactTaskRunner
from paicli.plan.model import Plan, TaskStatus
from paicli.plan.scheduler import Scheduler
from paicli.runtime import Runtime, build_policy
from paicli.tools.toolbox import ToolBox
from tests.fakellm import FAULT, FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import task_is

NAME = "soak"
TITLE = "Fault soak: 25 % of requests fail"
SEED = 18
FAULT_RATE = 0.25
PARALLEL = 8
FAULTS = [
    Reply.error(429, "rate limit reached", headers={"Retry-After": "0.2"}),
    Reply.error(500, "internal error"),
    Reply.error(503, "overloaded"),
    Reply.drop(after_chunks=2, content="a partial answer that is cut off"),
    Reply.hang(after_chunks=1, content="an answer that stops"),
]


def answer(task_id: str) -> str:
    return f"{task_id} finished: every line of its file was read and checked, nothing is left to do."


def run(quick: bool = False) -> Result:
    tasks = 10 if quick else 30
    return asyncio.run(_run(tasks))


async def _run(tasks: int) -> Result:
    graph, latencies = random_layered(tasks=tasks, layers=6 if tasks >= 12 else 3)
    clean = await _soak(graph, latencies, faults=False)
    faulty = await _soak(graph, latencies, faults=True)
    result = Result(NAME, TITLE, details={"seed": SEED, "fault_rate": FAULT_RATE, "tasks": tasks, "parallel": PARALLEL})
    result.add("completion rate", 100.0 * faulty["completed"] / tasks, "%", at_least=100.0)
    result.add("makespan with faults ÷ without", faulty["seconds"] / clean["seconds"])
    result.add("tool calls run twice", faulty["duplicated"], at_most=0)
    result.add("results from a partial reply", faulty["partial"], at_most=0)
    result.add("faults injected", faulty["faults"])
    result.details["without faults"] = clean
    result.details["with faults"] = faulty
    return result


async def _soak(graph: dict[str, list[str]], latencies: dict[str, float], *, faults: bool) -> dict[str, object]:
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        for task_id, seconds in latencies.items():
            fake.on(
                all_of(task_is(task_id), has_tool_result("read_file")), Reply.text(answer(task_id), latency=seconds / 2)
            )
            call = [("read_file", {"path": f"in/{task_id}.txt"}, f"call_{task_id}")]  # same bytes every run
            fake.on(task_is(task_id), Reply.tool_calls(call, latency=seconds / 2))
        if faults:
            # drawn per request without the system prompt, which names the (temporary) workspace
            fake.inject_faults(FAULT_RATE, FAULTS, seed=SEED, key=lambda body: json.dumps(body["messages"][1:]))
        sink = ListSink()
        runtime, llm = _runtime(fake.base_url, Path(folder), graph)
        meter = MeteredModel(llm)
        runner = ReactTaskRunner(
            runtime.system_prompt("executor"),
            lambda task: runtime.react(sink, llm=meter, task_id=task.id, answer_on_budget=False),
        )
        plan = make_plan(graph)
        start = time.monotonic()
        try:
            await Scheduler(runner, sink, max_parallel=PARALLEL).run(plan)
        finally:
            await llm.aclose()
        seconds = time.monotonic() - start
        return _outcome(plan, sink, seconds, meter, len([r for r in fake.requests if r.rule == FAULT]), llm)


def _runtime(base_url: str, folder: Path, graph: dict[str, list[str]]) -> tuple[Runtime, LLMClient]:
    workspace, home = folder / "workspace", folder / "home"
    (workspace / "in").mkdir(parents=True)
    home.mkdir()
    for task_id in graph:
        (workspace / "in" / f"{task_id}.txt").write_text(f"the input of {task_id}\n")
    settings = Settings(workspace=workspace, api_key=SecretStr("bench-key-0000"), base_url=base_url, model="fake-model")
    llm = LLMClient(
        base_url=base_url,
        api_key="bench-key-0000",
        model="fake-model",
        read_timeout=0.5,
        max_attempts=5,
        backoff_base=0.05,
        endpoint=Endpoint(max_in_flight=PARALLEL, backoff=Backoff(base=0.1, cap=2.0)),
        rate_limit_wait=30,
    )
    policy = build_policy(settings, home)
    tools = ToolBox.default(gate=policy, mark_data=True)
    return Runtime(settings=settings, sink=ListSink(), llm=llm, tools=tools, home=home, policy=policy), llm


def _outcome(
    plan: Plan, sink: ListSink, seconds: float, meter: MeteredModel, faults: int, llm: LLMClient
) -> dict[str, object]:
    runs: dict[str, int] = {}
    for event in sink.events:
        if isinstance(event, ToolResultEvent) and event.task_id is not None:
            runs[event.task_id] = runs.get(event.task_id, 0) + 1
    completed = [task for task in plan.tasks if task.status is TaskStatus.COMPLETED]
    return {
        "seconds": rounded(seconds),
        "completed": len(completed),
        "failed": {task.id: task.error for task in plan.tasks if task.status is not TaskStatus.COMPLETED},
        "duplicated": sum(count - 1 for count in runs.values() if count > 1),
        "partial": sum(1 for task in completed if task.result != answer(task.id)),
        "faults": faults,
        "requests": meter.requests,
        "retries": meter.retries.model_dump(),
        "probes": llm.endpoint.gate.probes,
    }
