"""Where the hooks that only listen run, for both front ends: when a turn ends, when a plan is approved and
when a plan ends (paicli/policy/hooks.py runs them; the hooks around tool calls run in the approval policy
and the tool box). What they say is shown through the turn's or the plan's sink."""

from __future__ import annotations

from typing import Any

from paicli.common.events import EventSink
from paicli.plan.model import Plan
from paicli.plan.outcome import PlanOutcome
from paicli.plan.session import Approve
from paicli.runtime import Runtime


async def turn_ended(runtime: Runtime, sink: EventSink, status: str, content: str | None) -> None:
    """`status`: answered, failed or cancelled; `content`: the answer, when there is one."""
    if runtime.hooks:
        ctx = runtime.tool_context(sink=sink)
        await runtime.hooks.notify("turn_end", ctx, status=status, content=content)


async def plan_ended(runtime: Runtime, sink: EventSink, outcome: PlanOutcome) -> None:
    if runtime.hooks:
        ctx = runtime.tool_context(sink=sink)
        plan = plan_facts(outcome.plan) if outcome.plan is not None else None
        facts = {"status": outcome.status.value, "summary": outcome.summary, "failure": outcome.failure}
        await runtime.hooks.notify("plan_end", ctx, **facts, plan=plan)


def approving(runtime: Runtime, sink: EventSink, approve: Approve) -> Approve:
    """`approve`, followed by the plan_approved hooks for each plan it approves."""
    hooks = runtime.hooks
    if not hooks:
        return approve

    async def approved(candidate: Plan) -> Plan | None:
        plan = await approve(candidate)
        if plan is not None:
            await hooks.notify("plan_approved", runtime.tool_context(sink=sink), plan=plan_facts(plan))
        return plan

    return approved


def plan_facts(plan: Plan) -> dict[str, Any]:
    """What a hook is told of a plan: its goal, summary, round and tasks (as the plan JSON has them)."""
    tasks = [
        {"id": t.id, "description": t.description, "type": t.type.value, "dependencies": t.dependencies}
        | ({"files": t.files} if t.files is not None else {})
        | {"status": t.status.value}
        for t in plan.tasks
    ]
    return {"goal": plan.goal, "summary": plan.summary, "round": plan.round, "tasks": tasks}
