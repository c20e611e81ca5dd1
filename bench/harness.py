"""Plans run in-process by the real Scheduler and task runner (a ReAct loop per task, the real
`LLMClient`) against the fake model server on 127.0.0.1 (bench/fakeserver.py, in its own process), which
routes by the task id in the request and injects each task's latency. No planner: the plans are built
here."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2
from pydantic import SecretStr

from paicli.common.events import NullSink
from paicli.config import Settings
from paicli.llm.client import LLMClient
from paicli.plan.executor import ReactTaskRunner
from paicli.plan.model import Plan, Task, TaskStatus
from paicli.plan.recorder import PlanRecorder
from paicli.plan.saved_plans import PlanStore
from paicli.plan.scheduler import Scheduler, TaskRunner
from paicli.runtime import Runtime, build_policy
from paicli.tools.toolbox import ToolBox

API_KEY = "bench-key-0000"
Graph = Mapping[str, Sequence[str]]
Schedule = Literal["eager", "batch"]
_CURRENT_TASK: ContextVar[str | None] = ContextVar("bench_current_task", default=None)


def make_plan(graph: Graph, goal: str = "benchmark goal") -> Plan:
    return Plan(goal=goal, tasks=[Task(id=i, description=f"do {i}", dependencies=list(d)) for i, d in graph.items()])


class RequestClock:
    """An httpx2 request hook: when each task's requests were handed to the transport (time.monotonic).
    The task is known from the context TimedRunner sets, so nothing has to search the request body."""

    def __init__(self) -> None:
        self.sent: dict[str, list[float]] = {}

    async def __call__(self, request: httpx2.Request) -> None:
        task_id = _CURRENT_TASK.get()
        if task_id is not None:
            self.sent.setdefault(task_id, []).append(time.monotonic())


@asynccontextmanager
async def runtime_for(
    base_url: str, folder: Path, clock: RequestClock | None = None, **settings: Any
) -> AsyncIterator[Runtime]:
    """A Runtime wired like `build_runtime` wires it (approval policy, gated tool box), pointed at the fake
    server, with its own workspace and home. With a `clock`, the client's requests are timed as they leave.
    `settings`: more Settings fields (`context_tokens=...`)."""
    workspace, home = folder / "workspace", folder / "home"
    workspace.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(API_KEY),
        base_url=base_url,
        model="fake-model",
        max_attempts=1,
        **settings,
    )
    hooks = {"request": [clock]} if clock is not None else {}
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(120.0, connect=10.0), event_hooks=hooks)
    llm = LLMClient(base_url=base_url, api_key=API_KEY, model="fake-model", max_attempts=1, http=http)
    policy = build_policy(settings, home)
    tools = ToolBox.default(gate=policy, mark_data=True)
    runtime = Runtime(settings=settings, sink=NullSink(), llm=llm, tools=tools, home=home, policy=policy)
    try:
        yield runtime
    finally:
        await http.aclose()


def react_runner(runtime: Runtime) -> ReactTaskRunner:
    """The task runner `paicli plan` uses: a fresh ReAct loop per task with the executor prompt."""
    sink = NullSink()
    return ReactTaskRunner(
        runtime.system_prompt("executor"),
        lambda task: runtime.react(sink, task_id=task.id, answer_on_budget=False),
    )


async def run_plan(
    runtime: Runtime,
    runner: TaskRunner,
    plan: Plan,
    *,
    max_parallel: int = 4,
    schedule: Schedule = "eager",
    save: bool = True,
) -> None:
    """Runs `plan` on a Scheduler wired as `build_plan_session` wires it. With `save`, a PlanRecorder saves
    the plan to .paicli/plans in the workspace as `paicli plan` does (the changes of one loop turn
    together, the files written in a worker thread), and the run ends, as a PlanSession does, once the
    last state is on disk."""
    recorder = PlanRecorder(PlanStore(runtime.workspace)) if save else None
    scheduler = Scheduler(runner, NullSink(), max_parallel=max_parallel, schedule=schedule, on_change=recorder)
    try:
        await scheduler.run(plan)
    finally:
        if recorder is not None:
            await recorder.flush()


@dataclass
class TimedRunner:
    """Wraps a runner and records when each task's runner started and returned (time.monotonic)."""

    inner: TaskRunner
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)

    async def __call__(self, plan: Plan, task: Task) -> str:
        start = time.monotonic()
        _CURRENT_TASK.set(task.id)  # this asyncio task's own context: concurrent tasks do not see it
        try:
            return await self.inner(plan, task)
        finally:
            self.spans[task.id] = (start, time.monotonic())


def assert_completed(plan: Plan) -> None:
    unfinished = [f"{t.id}: {t.status.value} {t.error}" for t in plan.tasks if t.status is not TaskStatus.COMPLETED]
    if unfinished:
        raise RuntimeError(f"the benchmark plan did not complete: {unfinished[:3]}")
