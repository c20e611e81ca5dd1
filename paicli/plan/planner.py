"""The planner: a goal becomes a validated `Plan` in one tool-free model request (plus re-asks).

Structured output: the first request asks for `response_format` json_schema (the plan schema in planner_text.py),
then `{"type": "json_object"}`, then nothing (a plain prompt). A 400, 422 or 500 answer to a request
that carried a `response_format` means "not supported" (the client recognises a body naming the field
on the first reply and does not retry it): the same request is sent again in the next mode. The mode
that worked, and the modes a model rejects, are kept on the client's `capabilities`, per model (the
planner's own when it is routed to one, paicli/llm/routed.py), and remembered across runs when the
client has a store: rejected modes are skipped from the start.

Re-ask: a reply `parse_plan_reply` rejects goes back to the model as its own assistant message (cut to
`REASK_EXCERPT` characters, head and tail, so a megabyte of junk is not sent back and doubled), followed
by a user message carrying the exact error; at most `max_reasks` times, then PlanError. The parse runs
off the event loop (`paicli.plan.offload`), so a cancel never waits for it.

Streaming: each reply is read as it arrives, and each task whose object is complete is emitted as
`plan_task_streamed`, and those of `plan` handed to `listener` (early start; paicli/plan/streamed.py).
The plan is still the whole reply's parse; a server that ignores `stream: true` gives every task at the end.

Rounds: after a replan the returned Plan holds every task of every round. The finished tasks of earlier
rounds come first, unchanged (COMPLETED results stay available to the new tasks), then the new PENDING
tasks. A new task whose id is already taken is renamed to the next free `task_N`, and the dependencies
of the other new tasks follow the rename, so one id names one task for the whole run. `amend` keeps the
finished tasks the same way and lets the model rewrite only the PENDING ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from functools import partial
from typing import Protocol

from paicli.common.errors import ModelHTTPError, PlanError, UnsupportedRequest
from paicli.common.events import EventSink, ModelUsage, Notice, PlanCreated
from paicli.common.values import Estimate, Usage
from paicli.llm.tokens import estimate_prompt
from paicli.llm.types import ChatModel, ChatResponse, Message
from paicli.plan import caps
from paicli.plan.contract import Contract
from paicli.plan.model import Plan, PlanStatus, TaskStatus
from paicli.plan.offload import off_loop
from paicli.plan.parse_reply import joined, parse_plan_reply
from paicli.plan.planner_text import (
    RESPONSE_FORMATS,
    completed_ids,
    finished_section,
    plural,
    reask_messages,
    renamed,
    replan_request,
    reply_instruction,
)
from paicli.plan.streamed import PlanStream, StreamListener

MODES = ("json_schema", "json_object", "plain")
NOT_SUPPORTED_STATUSES = frozenset({400, 422, 500})
REASK_EXCERPT = caps.REASK_EXCERPT


class GoalContext(Protocol):
    """What the planner's user message shows of the repository for a goal (paicli/repomap: the map).
    Goal-specific, so it goes in the user message: the system prompt stays byte-identical across goals."""

    def __call__(self, goal: str) -> str: ...
    def sent(self, map_text: str, request_tokens: int) -> None: ...


class Planner:
    def __init__(
        self,
        llm: ChatModel,
        *,
        system_prompt: str,
        sink: EventSink,
        max_tasks: int = 50,
        max_reasks: int = 2,
        contract: Contract | None = None,
        estimator: Callable[[Plan], Estimate] | None = None,
        context: GoalContext | None = None,
    ) -> None:
        self.llm = llm
        self.estimator = estimator  # what a plan's PENDING tasks will cost, for `plan_created`
        self.context = context
        self.contract = contract  # checked on every plan the model proposes; its problems are re-asked
        self.system_prompt = system_prompt
        self.sink = sink
        self.max_tasks = max_tasks
        self.max_reasks = max(0, max_reasks)
        self._mode = self._usable(llm.capabilities.plan_format())  # remembered on the client, across runs
        self.listener: StreamListener | None = None  # told of `plan`'s tasks as they stream (early start)
        self._stream = PlanStream(sink)

    @property
    def mode(self) -> str:
        """The structured-output mode the next request will use."""
        return MODES[self._mode]

    async def plan(self, goal: str, *, round: int = 1, attached: str = "") -> Plan:
        """A new plan for `goal`; emits `plan_created`. PlanError when no valid plan came back.

        `attached`: what the user's `@path` mentions attached; the planner alone sees it (a task that
        needs a file reads it), and it is not part of the plan's goal."""
        parts = [f"# Goal\n\n{goal.strip()}"]
        if attached.strip():
            heading = "# Attached by the user (tasks do not see this; a task that needs a file reads it)"
            parts.append(f"{heading}\n\n{attached}")
        repo_map = await self._map(goal)
        request = "\n\n".join([*parts, *([repo_map] if repo_map else []), reply_instruction()])
        self._sent(self.system_prompt, request, repo_map)
        plan = await self._ask(self.system_prompt, request, goal=goal, round=round, listener=self.listener)
        self.sink.emit(created(plan, self.estimator))
        return plan

    async def amend(self, plan: Plan, supplement: str) -> Plan:
        """The plan revised by the user's supplement: only the PENDING tasks may change."""
        kept = [task for task in plan.tasks if task.status is not TaskStatus.PENDING]
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        parts = [
            f"# Goal\n\n{plan.goal.strip()}",
            "# Current plan\n\n" + json.dumps(plan.spec(pending), indent=2, ensure_ascii=False),
        ]
        if kept:
            parts.append(finished_section(kept))
        parts += [
            f"# Change requested by the user\n\n{supplement.strip()}",
            "Revise the current plan for this request. Change only what the request affects: keep every "
            "other task exactly as it is (same id, description, type and dependencies). Reply with the "
            "complete revised plan, every task that should run and not only the changed ones, as one "
            "JSON object in the same format, and nothing else.",
        ]
        revised = await self._ask(
            self.system_prompt, "\n\n".join(parts), goal=plan.goal, round=plan.round, external=completed_ids(kept)
        )
        tasks = [task.model_copy(deep=True) for task in kept] + renamed(revised.tasks, {t.id for t in kept})
        amended = plan.model_copy(update={"summary": revised.summary or plan.summary, "tasks": tasks})
        amended.status = PlanStatus.CREATED
        self.sink.emit(created(amended, self.estimator))
        return amended

    async def replan(self, plan: Plan, *, reason: str, feedback: str | None = None, replanner_prompt: str) -> Plan:
        """A plan of the next round for the work that remains; `replanner_prompt` is its system prompt.

        The model sees the goal, the completed tasks with their results, the failed and skipped tasks
        of the latest round, and the reviewer's feedback; its tasks may depend on completed ids. Tasks
        of `plan` still PENDING or RUNNING (only after a cancel) become SKIPPED: the new plan replaces
        them.
        """
        next_round = plan.round + 1
        repo_map = await self._map(plan.goal)
        request = replan_request(plan, reason=reason, feedback=feedback, repo_map=repo_map)
        self._sent(replanner_prompt, request, repo_map)
        done = [task for task in plan.tasks if task.finished]
        fresh = await self._ask(
            replanner_prompt, request, goal=plan.goal, round=next_round, external=completed_ids(done)
        )
        old = [task.model_copy(deep=True) for task in plan.tasks]
        for task in old:
            if not task.finished:
                task.status = TaskStatus.SKIPPED
                task.error = f"replaced by the plan of round {next_round}"
        tasks = old + renamed(fresh.tasks, {task.id for task in old})
        new_plan = Plan(goal=plan.goal, summary=fresh.summary or plan.summary, tasks=tasks, round=next_round)
        self.sink.emit(created(new_plan, self.estimator))
        return new_plan

    async def _map(self, goal: str) -> str:
        """The repository map for `goal` (built off the event loop: indexing reads files), "" without one."""
        context = self.context
        if context is None:
            return ""
        return await off_loop(partial(context, goal), name="paicli-map")

    def _sent(self, system_prompt: str, request: str, repo_map: str) -> None:
        if self.context is not None and repo_map:
            messages: list[Message] = [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": request},
            ]
            self.context.sent(repo_map, estimate_prompt(messages))

    # ---- one conversation: request, validate, re-ask ----------------------------------------------

    async def _ask(
        self,
        system_prompt: str,
        request: str,
        *,
        goal: str,
        round: int,
        external: Collection[str] = (),
        listener: StreamListener | None = None,
    ) -> Plan:
        messages: list[Message] = [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": request},
        ]
        self._stream = PlanStream(
            self.sink, round=round, external=external, max_tasks=self.max_tasks, listener=listener
        )
        for reask in range(self.max_reasks + 1):
            response = await self._request(messages)
            try:
                plan = await off_loop(
                    partial(
                        parse_plan_reply,
                        response.content,
                        finish_reason=response.finish_reason,
                        goal=goal,
                        max_tasks=self.max_tasks,
                        external_ids=external,
                        round=round,
                    )
                )
                if self.contract is not None and (problems := self.contract.problems(plan)):
                    raise PlanError(joined(problems))
                return plan
            except PlanError as error:
                if reask == self.max_reasks:
                    attempts = self.max_reasks + 1
                    raise PlanError(
                        f"the model gave no valid plan in {attempts} {plural(attempts, 'reply', 'replies')}: {error}"
                    ) from error
                self.sink.emit(
                    Notice(
                        level="warning",
                        message=f"the plan was rejected ({error}); asking the model again "
                        f"({reask + 1} of {self.max_reasks})",
                    )
                )
                messages = [*messages, *reask_messages(response, error)]
        raise AssertionError("unreachable")  # the loop always returns or raises

    async def _request(self, messages: list[Message]) -> ChatResponse:
        """One model request in the best structured-output mode the server accepts."""
        while True:
            mode = MODES[self._mode]
            stream = self._stream
            stream.begin()
            try:
                response = await self.llm.chat(
                    messages,
                    response_format=RESPONSE_FORMATS[mode],
                    on_text=stream.feed,
                    on_restart=stream.begin,
                    on_spent=self._spent,
                )
            except ModelHTTPError as error:
                refused = isinstance(error, UnsupportedRequest) or error.status in NOT_SUPPORTED_STATUSES
                if mode == "plain" or not refused:
                    raise
                self._mode = self._usable(self._mode + 1)
                self.sink.emit(
                    Notice(
                        level="info",
                        message=f"the model server did not accept response_format {mode} (HTTP "
                        f"{error.status}); planning with {MODES[self._mode]} instead",
                    )
                )
                continue
            self.llm.capabilities.remember_plan_format(self._mode)
            self.sink.emit(ModelUsage(task_id=None, usage=response.usage))
            return response

    def _spent(self, usage: Usage) -> None:
        """A planner request that failed or was cancelled after reaching the server: its tokens are shown too."""
        self.sink.emit(ModelUsage(task_id=None, usage=usage))

    def _usable(self, mode: int) -> int:
        """`mode`, or the first mode after it whose response_format the model is not known to reject."""
        accepts = self.llm.capabilities.accepts
        while MODES[mode] != "plain" and not accepts(f"response_format.{MODES[mode]}"):
            mode += 1
        return mode


# ---- messages --------------------------------------------------------------------------------------


def created(plan: Plan, estimator: Callable[[Plan], Estimate] | None) -> PlanCreated:
    """The `plan_created` event of `plan`, with what running it is expected to cost when that is known."""
    return PlanCreated(round=plan.round, plan=plan.view(), estimate=estimator(plan) if estimator else None)
