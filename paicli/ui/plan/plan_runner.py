"""One plan on a terminal: the review screen, the live view, approval questions, and ESC that cancels it
at any moment. Driven by paicli.app; used by the REPL's `/plan` and by an interactive `paicli plan GOAL`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from prompt_toolkit.output import Output, create_output
from rich.console import Console
from rich.text import Text

from paicli.app.checkpoints.service import Checkpoints, attach_checkpoints
from paicli.app.driver import run_plan, run_with_signals
from paicli.app.jsonl import JsonLinesSink
from paicli.app.plan_inputs import PlanRequest
from paicli.app.servers import settle_servers
from paicli.common.events import EventSink, FanOutSink
from paicli.common.sanitize import one_line
from paicli.config import Settings
from paicli.plan.contract import unheld_commands
from paicli.plan.model import Plan, PlanStatus, Task
from paicli.plan.outcome import PlanOutcome
from paicli.plan.session import Amend
from paicli.runtime import Runtime, build_runtime, secret_values
from paicli.ui.chat.changes_view import changed_text
from paicli.ui.chat.render import ChatRenderer
from paicli.ui.plan.live_view import LivePlanView
from paicli.ui.plan.plan_facts import PlanFacts
from paicli.ui.plan.review_screen import review_plan
from paicli.ui.plan.review_stream import StreamingReview
from paicli.ui.prompt.approval_prompt import ApprovalPrompt
from paicli.ui.prompt.keys import CancelKeys
from paicli.ui.prompt.watch import cancel_keys


class PlanScreen:
    """What a running plan shows and reads on the terminal."""

    def __init__(
        self,
        runtime: Runtime,
        console: Console,
        approval: ApprovalPrompt,
        *,
        output: Output | None = None,
        reviewing: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> None:
        self.reviewing = reviewing  # entered while the review waits for the user (a notification)
        self.console = console
        self.approval = approval
        self.output = output  # where the review screen draws
        self.live = LivePlanView(console, secrets=runtime.secrets(), rate=runtime.llm.rate_status)
        self.facts = plan_facts(runtime)
        self.secrets = runtime.secrets()
        self._keys: CancelKeys | None = None
        # the review screen while the planner writes (a plan planned here and reviewed): opened by `watch`
        self.streaming: StreamingReview | None = None
        self._holding = False  # the streaming screen holds the keyboard and hides the live view

    def stream_review(self) -> StreamingReview:
        """Opens the review screen as soon as planning starts (call before `watch`); the sink it needs."""
        self.streaming = StreamingReview(output=self.output, secrets=self.secrets)
        return self.streaming

    @contextlib.contextmanager
    def watch(self, cancel: Callable[[], None]) -> Iterator[None]:
        with (
            cancel_keys(
                cancel,
                self.approval,
                before_question=[self.live.pause],
                after_question=[self.live.resume],
                above=self.live.snapshot,
            ) as keys,
            self.live,
        ):
            self._keys = keys
            if self.streaming is not None:
                self.live.pause()
                keys.pause()
                self._holding = True
                self.streaming.open(cancel)
            try:
                yield
            finally:
                if self.streaming is not None:  # planning ended without a plan to review (failed, cancelled)
                    self.streaming.request_close()  # `closed` waits for it; the keys and the view end paused
                self._holding = False

    async def closed(self) -> None:
        """Waits until the streaming review screen (if any) has given the terminal back."""
        if self.streaming is not None:
            await self.streaming.close()

    async def _end_streaming(self) -> None:
        """The whole plan is in: the streaming screen closes; the keys and the live view are given back."""
        if self.streaming is None:
            return
        await self.streaming.close()
        self.streaming = None
        if self._holding and self._keys is not None:
            self._holding = False
            self._keys.resume()
            self.live.resume()

    async def review(self, plan: Plan, amend: Amend) -> Plan | None:
        keys = self._keys.suspended() if self._keys is not None else contextlib.nullcontext()
        waiting = self.reviewing() if self.reviewing is not None else contextlib.nullcontext()
        with self.live.paused(), keys, waiting:
            await self._end_streaming()
            return await review_plan(plan, console=self.console, amend=amend, output=self.output, facts=self.facts)


def plan_facts(runtime: Runtime) -> PlanFacts:
    """The review's facts: each task's contract, the estimate, and the contract check of an `e` edit (as for
    a `--from` file: a FILE_WRITE task without files is accepted, ordered with the other writers)."""
    contract = runtime.contract()

    def problems(plan: Plan) -> list[str]:
        found = contract.problems(plan, require_files=False)
        if not found:
            contract.accept_legacy(plan)
        return found

    estimator, session_model = runtime.estimator(), runtime.settings.model

    def routed_model(task: Task) -> str | None:
        model = estimator.model_of(task)
        return model if model != session_model else None

    sandboxed = runtime.sandbox.sandbox is not None

    def map_share() -> tuple[int, int] | None:
        return runtime.last_map.last if runtime.last_map is not None else None

    return PlanFacts(
        problems=problems,
        estimate=estimator,
        model_of=routed_model,
        cost=lambda plan: estimator(plan).cost,
        unheld=lambda plan: unheld_commands(plan, sandboxed=sandboxed),
        map_share=map_share,
    )


async def plan_on_screen(
    runtime: Runtime,
    screen: PlanScreen,
    request: PlanRequest,
    *,
    also: EventSink | None = None,
    checkpoints: Checkpoints | None = None,
) -> PlanOutcome:
    """`also` receives every event too (a JSON-lines writer). A goal planned here and reviewed opens the
    review screen as planning starts (paicli/ui/plan/review_stream.py)."""
    sinks: list[EventSink] = [screen.live]
    if request.goal is not None and request.plan is None and not request.go:
        sinks.append(screen.stream_review())
    if also is not None:
        sinks.append(also)
    sink: EventSink = sinks[0] if len(sinks) == 1 else FanOutSink(*sinks)
    try:
        return await run_plan(
            runtime,
            sink,
            goal=request.goal,
            plan=request.plan,
            plan_id=request.plan_id,
            review=None if request.go else screen.review,
            watch=screen.watch,
            checkpoints=checkpoints,
            attached=request.attached,
            early=True if request.go else None,
            allowed_tools=request.allowed_tools,
        )
    finally:
        await screen.closed()


def plan_in_terminal(settings: Settings, request: PlanRequest, *, json_mode: bool) -> int:
    """`paicli plan GOAL` on a terminal without --yes: review, live view, approvals, ESC. With --json the
    screen goes to stderr so stdout carries only the JSON lines."""
    stream = sys.stderr if json_mode else sys.stdout
    console = Console(file=stream, highlight=False)
    output = create_output(stdout=stream)
    also = JsonLinesSink(sys.stdout, secret_values(settings)) if json_mode else None

    async def main() -> int:
        renderer = ChatRenderer(console, secrets=secret_values(settings))
        runtime = build_runtime(settings, renderer)
        renderer.rate = runtime.llm.rate_status
        approval = ApprovalPrompt(output=output, queued=lambda: runtime.policy.waiting if runtime.policy else 0)
        runtime.approve = approval
        for notice in request.notices:
            console.print(Text(one_line(notice, limit=1000), style="yellow"))
        checkpoints = attach_checkpoints(runtime, renderer)
        try:
            await settle_servers(runtime, runtime.sink)
            outcome = await plan_on_screen(
                runtime,
                PlanScreen(runtime, console, approval, output=output),
                request,
                also=also,
                checkpoints=checkpoints,
            )
        finally:
            await runtime.aclose()
            if checkpoints is not None:
                checkpoints.close()
        if outcome.changes:
            console.print(changed_text(outcome.changes, "paicli undo to revert"))
        if outcome.status is PlanStatus.FAILED:
            console.print(Text(f"paicli: {one_line(outcome.message() or '', limit=1000)}", style="red"))
        return outcome.exit_code()

    return run_with_signals(main)
