"""One `/plan` from goal to summary: plan → approve → execute → (replan on failure | review) → summary.

Each collaborator is passed in: the planner, the scheduler, the approval step (the review screen in the
REPL, automatic with --yes), and optionally the reviewer and the summarizer. Emits `plan_approved`,
`replan` and `plan_finished`; the planner emits `plan_created`, the scheduler the task events.

With `early` (streamed planning, --early: paicli/plan/early.py), read-only tasks start while the first
plan is written; the validated plan adopts those it keeps, their held events are let through right after
`plan_approved`, and the scheduler takes the running ones over. Planning that fails or is cancelled stops
them at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from paicli.common.errors import BudgetExceeded, ConfigError, PaicliError
from paicli.common.events import (
    EventSink,
    FileChange,
    Notice,
    PlanApproved,
    PlanFinished,
    ReplanEvent,
    ReviewEvent,
)
from paicli.common.values import Estimate, Usage
from paicli.llm.meter import MeteredModel
from paicli.plan.calibration import Calibrate, Prediction, learn
from paicli.plan.early import EarlyStart
from paicli.plan.model import SAVED_MARK, Plan, PlanStatus, Task, TaskStatus
from paicli.plan.outcome import PlanOutcome
from paicli.plan.planner import created
from paicli.plan.scheduler import PlanListener, Scheduler


class PlannerLike(Protocol):
    async def plan(self, goal: str, *, round: int = 1, attached: str = "") -> Plan: ...

    async def replan(self, plan: Plan, *, reason: str, feedback: str | None = None, replanner_prompt: str) -> Plan: ...

    async def amend(self, plan: Plan, supplement: str) -> Plan: ...


class Verdict(Protocol):
    score: float
    reflection: str


class ReviewerLike(Protocol):
    async def review(self, plan: Plan) -> Verdict: ...


Approve = Callable[[Plan], Awaitable[Plan | None]]  # the approved (maybe edited) plan, or None: cancelled
Amend = Callable[[Plan, str], Awaitable[Plan]]  # the plan revised by the user's supplement
Review = Callable[[Plan, Amend], Awaitable[Plan | None]]  # a review screen: approve, amend (re-plans) or cancel
Summarize = Callable[[Plan], Awaitable[str]]


async def approve_unasked(plan: Plan) -> Plan:
    return plan


@dataclass
class PlanSession:
    planner: PlannerLike
    scheduler: Scheduler
    sink: EventSink
    replanner_prompt: str
    approve: Approve = approve_unasked
    max_replans: int = 2
    reviewer: ReviewerLike | None = None
    review_threshold: float = 8.0
    max_rounds: int = 3
    summarize: Summarize | None = None
    meter: MeteredModel | None = None
    estimator: Callable[[Plan], Estimate] | None = None  # what an approved round is expected to cost
    estimate: Estimate | None = None  # the sum over the approved rounds
    # What the estimate's rule said of each approved task, and where what they cost is kept once the plan ends
    # (paicli/plan/calibration.py): the next plan's estimate on this server is calibrated from it.
    predict: Callable[[Plan], Mapping[str, Prediction]] | None = None
    calibrate: Calibrate | None = None
    predictions: dict[str, Prediction] = field(default_factory=dict)
    requests_before: int | None = None  # the meter's requests when the first round was approved
    on_change: PlanListener = field(default=lambda plan: None)
    flush: Callable[[], Awaitable[None]] | None = None  # waits until what on_change saved is on disk
    saved_id: Callable[[], str | None] = field(default=lambda: None)  # the id the plan is saved under, once saved
    discard: Callable[[], Awaitable[None]] | None = None  # forgets a new plan cancelled before it ran
    changes: Callable[[], list[FileChange] | None] = field(default=lambda: None)  # files changed so far (checkpoints)
    settle: Callable[[], Awaitable[None]] | None = None  # before plan_finished: lets `changes` catch up
    early: EarlyStart | None = None  # read-only tasks started while the first plan streams (approved unasked)
    failure: str | None = None  # why the plan FAILED, for the user
    failure_brief: str | None = None  # the same without the task errors, for a front end that showed them
    summary: str | None = None  # the final answer, once the plan has finished
    usage: Usage = field(default_factory=Usage)  # what `plan_finished` said the plan used (a cancelled one too)
    # The plan as it now stands: the reviewed one once approved (an amend or an edit makes a new Plan),
    # the next round's after a replan. Whatever stops the run, this is the plan that is finished and saved.
    current: Plan | None = field(default=None, init=False)

    async def run(self, goal: str | None = None, *, plan: Plan | None = None, attached: str = "") -> PlanOutcome:
        """Plans `goal` (or takes `plan`, e.g. a resumed one) and drives it to a final status.

        Every way a plan can end is an outcome, except cancellation, which announces the end and then
        travels on as asyncio.CancelledError (the caller's task is what was cancelled)."""
        self.current = plan
        planned_here = plan is None
        adopted: dict[asyncio.Task[str], Task] = {}
        try:
            if plan is None:
                assert goal is not None
                if self.early is not None:
                    self.early.begin(goal)
                plan = self.current = await self.planner.plan(goal, attached=attached)
                if self.early is not None:
                    adopted = self.early.adopt(plan)
            else:
                self.sink.emit(created(plan, self.estimator))
            if not await self._approve(plan):
                if planned_here and self.discard is not None:  # nothing ran: no entry to resume
                    await self.discard()
                return self._finish(self.current or plan, PlanStatus.CANCELLED)
            finished = await self._execute(self.current or plan, adopted)
            summary = await self._summary(finished)  # None unless COMPLETED
            await self._settle()
            return self._finish(finished, finished.status, summary)
        except asyncio.CancelledError:
            await asyncio.shield(self._stop_early())
            if self.current is not None:
                await asyncio.shield(self._settle())
                self._finish(self.current, PlanStatus.CANCELLED)
            else:  # cancelled while planning: there is no plan, but the stream still ends
                self._announce(PlanStatus.CANCELLED, None, Usage())
            raise
        except PaicliError as err:
            self.failure = str(err)
            await self._stop_early()
            if self.current is None:  # planning failed: there is no plan, but the stream still ends
                usage = self._announce(PlanStatus.FAILED, self.failure, Usage())
                return PlanOutcome(
                    PlanStatus.FAILED,
                    None,
                    failure=self.failure,
                    usage=usage,
                    configuration=isinstance(err, ConfigError),
                )
            await self._settle()
            return self._finish(self.current, PlanStatus.FAILED)
        finally:
            await asyncio.shield(self._stop_early())
            if self.flush is not None:
                await self.flush()

    async def _stop_early(self) -> None:
        if self.early is not None:
            await self.early.stop()

    async def _settle(self) -> None:
        if self.settle is not None:
            await self.settle()

    async def _approve(self, plan: Plan) -> bool:
        """Shows `plan` for approval; the approved version (maybe amended or edited) becomes current."""
        self.on_change(plan)
        approved = await self.approve(plan)
        if approved is None:
            return False
        self.current = approved
        expected = None
        if self.estimator is not None:
            expected = self.estimator(approved)  # summed with earlier rounds; a cost stays known only if both are
            self.estimate = expected if self.estimate is None else self.estimate + expected
        if self.predict is not None:
            self.predictions.update(self.predict(approved))
        if self.requests_before is None and self.meter is not None:  # early tasks' requests count after it
            self.requests_before = self.meter.requests - (self.early.requests() if self.early is not None else 0)
        self.sink.emit(PlanApproved(round=approved.round, estimate=expected))
        if self.early is not None and not self.early.held.released:
            self.early.held.release()  # the early tasks' events, in their order, after plan_approved
        return True

    async def _execute(self, plan: Plan, adopted: dict[asyncio.Task[str], Task]) -> Plan:
        replans = reviews = 0
        self._nothing_to_run(plan)
        while True:
            plan.status = PlanStatus.RUNNING
            self.on_change(plan)
            await self.scheduler.run(plan, adopted)
            adopted = {}
            if self.meter is not None and self.meter.exhausted:
                self.failure = f"budget spent: {self.meter.usage.total:,} of {self.meter.budget:,} tokens used"
                plan.status = PlanStatus.FAILED
                return plan
            feedback = None
            reason = failure_report(plan)
            if reason:
                if replans >= self.max_replans:
                    self.failure = f"{reason} (no replans left: {self.max_replans} used)"
                    self.failure_brief = (
                        f"{failure_report(plan, brief=True)} (no replans left: {self.max_replans} used)"
                    )
                    plan.status = PlanStatus.FAILED
                    return plan
                replans += 1
            else:
                if self.reviewer is None:
                    plan.status = PlanStatus.COMPLETED
                    return plan
                reviews += 1
                verdict = await self.reviewer.review(plan)
                self.sink.emit(ReviewEvent(round=plan.round, score=verdict.score, reflection=verdict.reflection))
                if verdict.score >= self.review_threshold:
                    plan.status = PlanStatus.COMPLETED
                    return plan
                if reviews >= self.max_rounds:
                    self.sink.emit(
                        Notice(
                            level="warning",
                            message=(
                                f"review score {verdict.score:g} is still under {self.review_threshold:g} after "
                                f"{reviews} review rounds (max_rounds); stopping with what was done"
                            ),
                        )
                    )
                    plan.status = PlanStatus.COMPLETED
                    return plan
                reason = f"the reviewer scored the result {verdict.score:g}/10"
                feedback = verdict.reflection
            self.sink.emit(ReplanEvent(round=plan.round + 1, reason=reason))
            self.current = await self.planner.replan(
                plan, reason=reason, feedback=feedback, replanner_prompt=self.replanner_prompt
            )
            if not await self._approve(self.current):
                self.current.status = PlanStatus.CANCELLED  # the new round was declined in review
                return self.current
            plan = self.current

    def _nothing_to_run(self, plan: Plan) -> None:
        """A resumed plan whose tasks all claim COMPLETED runs nothing: it says so, then is reviewed (when
        review is on) like any other, its results marked as not re-checked."""
        if any(task.status is TaskStatus.PENDING for task in plan.tasks):
            return
        if not any(task.from_saved for task in plan.tasks):
            return
        then = (
            "the reviewer judges them as they are"
            if self.reviewer is not None
            else "review is off, so nothing checks them (resume in the REPL and press r in review to run a task again)"
        )
        self.sink.emit(
            Notice(
                level="warning",
                message=(
                    "nothing to run: every task of the resumed plan is COMPLETED in the saved file, and its results "
                    f"are {SAVED_MARK}; {then}"
                ),
            )
        )

    async def _summary(self, plan: Plan) -> str | None:
        if plan.status is not PlanStatus.COMPLETED:
            return None
        if self.summarize is None:
            return plan.summary or None
        try:
            return await self.summarize(plan)
        except BudgetExceeded:
            return plan.summary or None

    def _finish(self, plan: Plan, status: PlanStatus, summary: str | None = None) -> PlanOutcome:
        if self.calibrate is not None:
            learn(plan, self.predictions, self.calibrate)
        plan.status = status
        self.on_change(plan)
        if summary is None and status is PlanStatus.FAILED:
            summary = self.failure
        self.summary = summary
        usage = self._announce(status, summary, sum((t.usage for t in plan.tasks), Usage()))
        failure = self.failure if status is PlanStatus.FAILED else None
        return PlanOutcome(
            status,
            plan,
            summary=summary if status is PlanStatus.COMPLETED else None,
            failure=failure,
            failure_brief=self.failure_brief if failure else None,
            usage=usage,
            saved_id=self.saved_id(),
        )

    def _announce(self, status: PlanStatus, summary: str | None, task_usage: Usage) -> Usage:
        usage = self.meter.usage if self.meter is not None else task_usage
        # what the estimate covers: requests after the first approval (a replan's own request included)
        requests = self.meter.requests - (self.requests_before or 0) if self.meter is not None else None
        retries = self.meter.retries if self.meter is not None else None
        self.sink.emit(
            PlanFinished(
                status=status,
                summary=summary,
                usage=usage,
                estimate=self.estimate,
                requests=requests,
                retries=retries,
                changes=self.changes(),
            )
        )
        self.usage = usage
        return usage


def failure_report(plan: Plan, *, brief: bool = False) -> str:
    """'' when the latest round succeeded; otherwise what failed (`brief`: without the errors) and what was
    skipped, in one line."""
    current = plan.current()
    failed = [t for t in current if t.status is TaskStatus.FAILED]
    skipped = [t.id for t in current if t.status is TaskStatus.SKIPPED]
    if not failed and not skipped:
        return ""
    parts = [f"{t.id} failed" if brief else f"{t.id} failed: {t.error}" for t in failed]
    if skipped:
        parts.append(f"skipped: {', '.join(skipped)}")
    return "; ".join(parts)
