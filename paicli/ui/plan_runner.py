"""Runs one plan on a terminal: the review screen, the live view, approval questions, and ESC that
cancels it at any moment. Shared by the REPL's `/plan` and an interactive `paicli plan GOAL`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass

from prompt_toolkit.output import Output, create_output
from rich.console import Console
from rich.text import Text

from paicli.config import Settings
from paicli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, PaicliError
from paicli.events import EventSink, FanOutSink
from paicli.plan.model import Plan, PlanStatus
from paicli.plan.session import PlanSession
from paicli.runtime import Runtime, build_plan_session, build_runtime, secret_values
from paicli.ui.approval import ApprovalPrompt
from paicli.ui.keys import CancelKeys
from paicli.ui.live import LivePlanView
from paicli.ui.render import ChatRenderer, one_line
from paicli.ui.review import review_plan


@dataclass
class PlanRun:
    session: PlanSession
    job: asyncio.Task[Plan]  # done: cancelled, failed with an exception, or the finished plan


async def drive_plan(
    runtime: Runtime,
    console: Console,
    approval: ApprovalPrompt,
    *,
    goal: str | None,
    plan: Plan | None = None,
    plan_id: str | None = None,
    also: EventSink | None = None,
    output: Output | None = None,
) -> PlanRun:
    """`also` receives every event too (a JSON-lines writer); `output` is where the review screen draws."""
    live = LivePlanView(console, secrets=runtime.secrets())
    keys = CancelKeys(lambda: job.cancel())

    async def approve(candidate: Plan) -> Plan | None:
        with live.paused(), keys.suspended():
            return await review_plan(candidate, console=console, amend=session.planner, output=output)  # type: ignore[arg-type]

    def pause() -> None:
        live.pause()
        keys.pause()

    def resume() -> None:
        keys.resume()
        live.resume()

    sink: EventSink = live if also is None else FanOutSink(live, also)
    session = build_plan_session(runtime, sink, approve=approve, plan_id=plan_id)
    job = asyncio.create_task(session.run(goal, plan=plan))
    with keys, live, approval.attached(pause=pause, resume=resume, on_cancel=job.cancel):
        try:
            await asyncio.wait({job})
        finally:
            if not job.done():  # whoever awaits us is being cancelled: stop the plan first
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job
    return PlanRun(session, job)


def plan_in_terminal(
    settings: Settings, goal: str | None, *, plan: Plan | None, plan_id: str | None, json_mode: bool
) -> int:
    """`paicli plan GOAL` on a terminal without --yes: review, live view, approvals, ESC. With --json the
    screen goes to stderr so stdout carries only the JSON lines."""
    from paicli.headless import JsonLinesSink, run_async

    screen = sys.stderr if json_mode else sys.stdout
    console = Console(file=screen, highlight=False)
    output = create_output(stdout=screen)
    also = JsonLinesSink(sys.stdout, secret_values(settings)) if json_mode else None

    async def main() -> int:
        runtime = build_runtime(settings, ChatRenderer(console, secrets=secret_values(settings)))
        approval = ApprovalPrompt(output=output)
        runtime.approve = approval
        try:
            run = await drive_plan(
                runtime, console, approval, goal=goal, plan=plan, plan_id=plan_id, also=also, output=output
            )
        finally:
            await runtime.aclose()
        if run.job.cancelled():
            return EXIT_CANCELLED
        error = run.job.exception()
        if error is not None:
            if not isinstance(error, PaicliError):
                raise error
            console.print(Text(f"paicli: {one_line(str(error), limit=1000)}", style="red"))
            return EXIT_FAILED
        finished = run.job.result()
        if finished.status is PlanStatus.COMPLETED:
            return EXIT_OK
        if finished.status is PlanStatus.CANCELLED:
            return EXIT_CANCELLED
        console.print(Text(f"plan failed: {one_line(run.session.failure or '', limit=1000)}", style="red"))
        return EXIT_FAILED

    return run_async(main)
