"""Plan mode in the REPL: `/plan GOAL`, `/plan` (plans the next message), `/plan resume [ID]`, `/plans`."""

from __future__ import annotations

from rich.text import Text

from paicli.app.plan_inputs import PlanRequest, saved_plan
from paicli.errors import ConfigError
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
    records = PlanStore(ctx.workspace).list()
    if not records:
        ctx.say("no saved plans yet", "dim")
    for record in records[:20]:
        plan = record.plan
        done = sum(1 for t in plan.tasks if t.status.value == "COMPLETED")
        ctx.show(Text.assemble(
            (one_line(record.id, limit=80), "bold"),
            f"  {plan.status.value:<9} {done}/{len(plan.tasks)} tasks · round {plan.round}  ",
            (one_line(plan.goal, limit=80), "dim"),
        ))  # fmt: skip
    return Outcome.CONTINUE


async def resume_plan(ctx: CommandContext, plan_id: str) -> None:
    try:
        request = saved_plan(ctx.workspace, plan_id)
    except ConfigError as err:
        ctx.error(one_line(str(err), limit=1000))
        return
    ctx.say(f"resuming {request.plan_id}", "dim")
    await ctx.run_plan(request)
