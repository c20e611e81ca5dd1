"""Plan mode in the REPL: `/plan GOAL`, `/plan` (plans the next message), `/plan resume [ID]`, `/plans`."""

from __future__ import annotations

import time

from rich.table import Table
from rich.text import Text

from paicli.app.plan_inputs import PlanRequest, saved_plan
from paicli.errors import ConfigError
from paicli.plan.model import PlanStatus, TaskStatus
from paicli.plan.store import PlanStore
from paicli.sanitize import one_line
from paicli.ui.slash import CommandContext, Outcome


async def plan_slash(ctx: CommandContext, arg: str) -> Outcome:
    words = arg.split(maxsplit=1)
    if not words:
        ctx.plan_next_message()
        ctx.say("the next message will be planned · ESC cancels", "dim")
    elif words[0] == "resume":
        await resume_plan(ctx, words[1].strip() if len(words) > 1 else "")
    else:
        await ctx.run_plan(PlanRequest(arg.strip()))
    return Outcome.CONTINUE


async def list_plans(ctx: CommandContext, arg: str) -> Outcome:
    """`/plans`: the saved plans, newest first, as an aligned table; `/plan resume` takes any unique
    beginning of an id."""
    records = PlanStore(ctx.workspace).list()
    if not records:
        ctx.say("no saved plans yet", "dim")
        return Outcome.CONTINUE
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim")
    for name in ("id", "age", "status", "done"):
        table.add_column(name, justify="right" if name in ("age", "done") else "left", no_wrap=True)
    table.add_column("goal", overflow="fold", ratio=1)
    now = time.time()
    for record in records[:20]:
        plan = record.plan
        done = sum(1 for t in plan.tasks if t.status is TaskStatus.COMPLETED)
        table.add_row(
            Text(one_line(record.id, limit=80), style="bold"),
            age(now - record.updated_at),
            Text(plan.status.value, style=STATUS_STYLES.get(plan.status, "")),
            f"{done}/{len(plan.tasks)}",
            Text(one_line(plan.goal, limit=200), style="dim"),
        )
    ctx.show(table)
    return Outcome.CONTINUE


STATUS_STYLES = {PlanStatus.COMPLETED: "green", PlanStatus.FAILED: "red", PlanStatus.CANCELLED: "yellow"}


def age(seconds: float) -> str:
    """`40s`, `12m`, `3h`, `5d`: how long ago, in the largest unit that fits."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


async def resume_plan(ctx: CommandContext, plan_id: str) -> None:
    try:
        request = saved_plan(ctx.workspace, plan_id)
    except ConfigError as err:
        ctx.error(one_line(str(err), limit=1000))
        return
    goal = one_line(request.plan.goal, limit=200) if request.plan is not None else ""
    ctx.say(f"resuming {request.plan_id}: {goal}" if goal else f"resuming {request.plan_id}", "dim")
    await ctx.run_plan(request)
