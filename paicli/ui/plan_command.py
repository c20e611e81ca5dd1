"""Plan mode in the REPL: `/plan GOAL`, `/plan` (plans the next message), `/plan resume [ID]`, `/plans`.

A plan runs as one asyncio task watched by `CancelKeys`, so ESC cancels it at any moment (planning,
executing, replanning); the review screen and approval questions take the keyboard while they ask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from paicli.errors import ConfigError, PaicliError
from paicli.plan.model import Plan, PlanStatus
from paicli.plan.store import PlanStore, prepare_resume
from paicli.ui.commands import Outcome
from paicli.ui.plan_runner import drive_plan
from paicli.ui.render import one_line

if TYPE_CHECKING:
    from paicli.ui.repl import Repl


async def plan_slash(repl: Repl, arg: str) -> Outcome:
    words = arg.split(maxsplit=1)
    if not words:
        repl.plan_next = True
        repl.say("the next message will be planned · ESC cancels", "dim")
    elif words[0] == "resume":
        await resume_plan(repl, words[1].strip() if len(words) > 1 else "")
    else:
        await run_plan(repl, goal=arg.strip())
    return Outcome.CONTINUE


async def list_plans(repl: Repl, arg: str) -> Outcome:
    records = PlanStore(repl.runtime.workspace).list()
    if not records:
        repl.say("no saved plans yet", "dim")
    for record in records[:20]:
        plan = record.plan
        done = sum(1 for t in plan.tasks if t.status.value == "COMPLETED")
        line = Text.assemble(
            (record.id, "bold"),
            f"  {plan.status.value:<9} {done}/{len(plan.tasks)} tasks · round {plan.round}  ",
            (one_line(plan.goal, limit=80), "dim"),
        )
        repl.console.print(line)
    return Outcome.CONTINUE


async def resume_plan(repl: Repl, plan_id: str) -> None:
    store = PlanStore(repl.runtime.workspace)
    try:
        record = store.load(plan_id) if plan_id else store.latest_resumable()
        if record is None:
            raise ConfigError("no saved plan to resume (/plans lists them)")
        plan = prepare_resume(record.plan)
    except ConfigError as err:
        repl.error(str(err))
        return
    repl.say(f"resuming {record.id}", "dim")
    await run_plan(repl, goal=None, plan=plan, plan_id=record.id)


async def run_plan(repl: Repl, *, goal: str | None, plan: Plan | None = None, plan_id: str | None = None) -> None:
    run = await drive_plan(repl.runtime, repl.console, repl.approval, goal=goal, plan=plan, plan_id=plan_id)
    session, job = run.session, run.job
    if session.meter is not None:
        repl.renderer.session_usage = repl.renderer.session_usage + session.meter.usage
    if job.cancelled():
        repl.say("plan cancelled · /plan resume continues it", "dim")
        return
    error = job.exception()
    if error is not None:
        if not isinstance(error, PaicliError):
            raise error
        repl.error(one_line(str(error), limit=1000))
        return
    finished = job.result()
    if finished.status is PlanStatus.FAILED:
        repl.error(f"plan failed: {one_line(session.failure or 'see the tasks above', limit=1000)}")
    elif finished.status is PlanStatus.COMPLETED:
        repl.remember_plan(finished, session.summary)
