"""Wiring of one plan: the planner, scheduler, reviewer and summarizer a plan session needs, built from the
process's `Runtime` (paicli/runtime.py). Plan mode loads with the first plan, not at start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paicli.agent.react import ReactLoop
from paicli.common.events import EventSink, NullSink
from paicli.llm.meter import MeteredModel
from paicli.llm.routed import RoutedModel
from paicli.llm.types import ChatModel
from paicli.runtime import Runtime
from paicli.tools.toolbox import ToolBox

if TYPE_CHECKING:  # plan mode loads with the first plan, not at start-up
    from paicli.plan.model import Task
    from paicli.plan.session import Approve, PlanSession


def build_plan_session(
    runtime: Runtime,
    sink: EventSink,
    *,
    approve: Approve | None = None,
    plan_id: str | None = None,
    tools: ToolBox | None = None,
    early: bool = False,
) -> PlanSession:
    """Everything one plan needs, sharing the runtime's client and locks. Its own usage meter (with the
    hard budget) wraps the client, so the plan's usage and budget count only this plan's requests. The
    planner, each task, the summarizer and the reviewer name the model paicli/plan/routing.py gives them.
    `approve`: who approves the plan (default: approved unasked). `early`: read-only tasks start while the
    first plan streams (paicli/plan/early.py); only for a plan approved unasked. `tools`: the plan's tool
    set (default: the runtime's now)."""
    from paicli.plan.contract import held_to_files, scope_of
    from paicli.plan.early import EarlyStart, HeldEvents
    from paicli.plan.executor import ReactTaskRunner
    from paicli.plan.extra_tools import tool_catalogue
    from paicli.plan.model import Plan
    from paicli.plan.planner import Planner
    from paicli.plan.prefetch import Prefetched, PrefetchedModel, SendFirst
    from paicli.plan.recorder import PlanRecorder
    from paicli.plan.review import Reviewer
    from paicli.plan.routing import model_for_planner, model_for_reviewer, model_for_summarizer, model_for_task
    from paicli.plan.saved_plans import PlanStore
    from paicli.plan.scheduler import Scheduler
    from paicli.plan.session import PlanSession, approve_unasked
    from paicli.plan.summary import Summarizer

    s = runtime.settings
    meter = MeteredModel(runtime.llm, budget=s.max_budget_tokens)
    executor_prompt = runtime.system_prompt("executor")
    summarizer_prompt = runtime.system_prompt("summarizer")
    tools = tools or runtime.tools  # the plan's tool set: MCP servers that get ready later do not change it
    catalogue = tool_catalogue(tools.tools)
    sandboxed = runtime.sandbox.sandbox is not None
    held = HeldEvents(sink) if early else None
    sink = held or sink  # early tasks' events wait for plan_approved; the others pass
    early_meter = MeteredModel(meter)  # counts the early tasks' requests (they count in plan_finished)

    kept = Prefetched() if early else None  # writers' first replies sent early (paicli/plan/prefetch.py)

    def make_loop(task: Task, model: MeteredModel = meter) -> ReactLoop:
        llm: ChatModel = RoutedModel(model, model_for_task(s, task.type))
        if kept is not None and model is meter:
            llm = PrefetchedModel(llm, kept)
        return runtime.react(sink, llm=llm, task_id=task.id, scope=scope_of(task), answer_on_budget=False, tools=tools)

    def first_request_loop(task: Task) -> ReactLoop:  # says nothing: the task is the scheduler's to run
        assert kept is not None
        llm = SendFirst(RoutedModel(early_meter, model_for_task(s, task.type)), kept)
        return runtime.react(
            NullSink(), llm=llm, task_id=task.id, scope=scope_of(task), answer_on_budget=False, tools=tools
        )

    recorder = PlanRecorder(PlanStore(runtime.workspace), plan_id=plan_id, usage=lambda: meter.usage)
    scheduler = Scheduler(
        ReactTaskRunner(executor_prompt, make_loop),
        sink,
        max_parallel=s.max_parallel,
        schedule=s.schedule,
        on_change=recorder,
        unbounded=lambda task: not held_to_files(task, sandboxed=sandboxed),
    )
    estimator = runtime.estimator(tools)
    planner = Planner(
        RoutedModel(meter, model_for_planner(s)),
        system_prompt=runtime.system_prompt("planner") + catalogue,
        sink=sink,
        contract=runtime.contract(tools),
        estimator=estimator,
        context=runtime.planner_map(sink),
    )
    session = PlanSession(
        planner=planner,
        scheduler=scheduler,
        sink=sink,
        replanner_prompt=runtime.system_prompt("replanner") + catalogue,
        approve=approve or approve_unasked,
        max_replans=s.max_replans,
        meter=meter,
        on_change=recorder,
        flush=recorder.flush,
        saved_id=lambda: recorder.saved_id,
        discard=recorder.discard,
        reviewer=Reviewer(meter, system_prompt=runtime.system_prompt("reviewer"), model=model_for_reviewer(s))
        if s.review
        else None,
        review_threshold=s.review_threshold,
        max_rounds=s.max_rounds,
        summarize=Summarizer(RoutedModel(meter, model_for_summarizer(s)), system_prompt=summarizer_prompt),
        estimator=estimator,
        predict=estimator.predict,
        calibrate=lambda samples, model: runtime.llm.capabilities.calibrate(samples, model),
    )
    recorder.failure = lambda: session.failure
    recorder.changes = lambda: session.changes()
    if held is not None:
        contract = runtime.contract(tools)
        session.early = planner.listener = EarlyStart(
            ReactTaskRunner(executor_prompt, lambda task: make_loop(task, early_meter)),
            held,
            max_parallel=s.max_parallel,
            problems=lambda task: contract.problems(Plan(goal="", tasks=[task])),
            requests=lambda: early_meter.requests,
            prefetch=ReactTaskRunner(executor_prompt, first_request_loop),
            kept=kept,
        )
    return session
