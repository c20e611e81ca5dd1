"""Plan mode in the REPL: `/plan GOAL`, `/plan --go GOAL` (approved unasked, its read-only tasks starting
while it is planned), `/plan` (plans the next message), `/plan resume [ID]`, `/plans`."""

from __future__ import annotations

import time

from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from paicli.app.plan_inputs import PlanRequest, saved_plan
from paicli.common.errors import ConfigError
from paicli.common.sanitize import one_line
from paicli.plan.model import PlanStatus, TaskStatus
from paicli.plan.saved_plans import PlanRecord, PlanStore
from paicli.ui.commands.context import CommandContext, Outcome


async def plan_slash(ctx: CommandContext, arg: str) -> Outcome:
    words = arg.split(maxsplit=1)
    if not words:
        ctx.plan_next_message()
        ctx.say("the next message will be planned · ESC cancels", "dim")
    elif words[0] == "resume":
        await resume_plan(ctx, words[1].strip() if len(words) > 1 else "")
    else:
        go, goal = _go(arg.strip())
        if go and not goal:
            ctx.error("/plan --go needs a GOAL: it plans and runs it unreviewed")
            return Outcome.CONTINUE
        await ctx.run_plan(PlanRequest(goal, go=go))
    return Outcome.CONTINUE


def _go(arg: str) -> tuple[bool, str]:
    """(whether `--go` leads the argument, the goal after it)."""
    first, _, rest = arg.partition(" ")
    return (True, rest.strip()) if first == "--go" else (False, arg)


async def list_plans(ctx: CommandContext, arg: str) -> Outcome:
    """`/plans`: the saved plans, newest first, as an aligned table; `/plan resume` takes any unique
    beginning of an id."""
    records = PlanStore(ctx.workspace).list()
    if not records:
        ctx.say("no saved plans yet", "dim")
        return Outcome.CONTINUE
    ctx.show(PlansTable(records[:20], time.time()))
    return Outcome.CONTINUE


class PlansTable:
    """id, age, status, done/total and goal, one row a plan; under 80 columns each plan takes two lines
    (the id whole, then the rest wrapped), so the goal never disappears and the id stays whole."""

    def __init__(self, records: list[PlanRecord], now: float) -> None:
        self.rows = []
        for record in records:
            plan = record.plan
            done = sum(1 for t in plan.tasks if t.status is TaskStatus.COMPLETED)
            self.rows.append(
                (
                    Text(one_line(record.id, limit=100), style="bold"),
                    age(now - record.updated_at),
                    Text(plan.status.value, style=STATUS_STYLES.get(plan.status, "")),
                    f"{done}/{len(plan.tasks)}",
                    Text(one_line(plan.goal, limit=200), style="dim"),
                )
            )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width < NARROW:
            for plan_id, when, status, done, goal in self.rows:
                yield Text(plan_id.plain, style="bold", overflow="fold")
                yield Padding(Text.assemble(f"{when} · ", status, f" · {done} · ", goal), (0, 0, 0, 2))
            return
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim")
        table.add_column("id", no_wrap=True, overflow="ellipsis", max_width=40)
        for name in ("age", "status", "done"):
            table.add_column(name, justify="left" if name == "status" else "right", no_wrap=True)
        table.add_column("goal", overflow="fold", ratio=1)
        for row in self.rows:
            table.add_row(*row)
        yield table


NARROW = 80
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
