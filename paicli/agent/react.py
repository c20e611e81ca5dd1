"""The ReAct loop: ask the model, run the tools it calls, feed the results back, until it answers.

Used by chat mode and by every task of a plan. It emits events and never prints; cancellation arrives
as asyncio.CancelledError and simply propagates (tools kill their processes on the way out).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from paicli.common.errors import AgentError
from paicli.common.events import (
    ApprovalWaited,
    CommandOutput,
    EventSink,
    ModelUsage,
    Notice,
    ReasoningDelta,
    ReplyRestarted,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.values import Usage
from paicli.llm.types import ChatModel, ChatResponse, Message, ToolCall, ToolSpec
from paicli.tools.arguments import arguments_or_raw
from paicli.tools.base import ApprovalDecision, ApprovalRequest, Tool, ToolContext, ToolOutcome

EMPTY_REPLY_PROMPT = (
    "Your last reply was empty: no text and no tool call. Reply now: answer the request above, or call a "
    "tool if you still need one."
)
EMPTY_AFTER_TOOLS_PROMPT = (
    "Your last reply was empty: no text and no tool call. Using the tool results above, write your final answer now."
)
EMPTY_ANSWER = "the model returned an empty answer"
DIGEST_HEADER = "(The model gave no final answer; this is a digest of what its tools returned.)\n"
FILTERED = frozenset({"content_filter", "sensitive", "safety", "prohibited_content", "blocklist", "spii", "recitation"})
BUDGET_SPENT_PROMPT = (
    "You have used all the tool steps allowed for this turn. Do not call tools. Answer now with what you "
    "have: what is done, what is not, and what the user should do next."
)


class Tools(Protocol):
    def specs(self) -> list[ToolSpec]: ...
    def tool(self, name: str) -> Tool | None: ...
    def is_read_only(self, name: str) -> bool: ...
    def summary(self, name: str, arguments: dict[str, Any] | str) -> str: ...
    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolOutcome: ...
    def cancelled(self, call: ToolCall, partial: str, ctx: ToolContext) -> ToolOutcome: ...


# Called after each reply's tool calls ran, with the calls and their outcomes; a text it returns ends the run
# with that text as the answer, without the closing request (a plan's FILE_WRITE task whose files are written).
FinishWhen = Callable[[list[ToolCall], list[ToolOutcome]], str | None]

# Called before every model request with the conversation so far; returns the messages to send (possibly
# compressed). Also the place where a token budget refuses to start a new request.
BeforeRequest = Callable[[list[Message]], Awaitable[list[Message]]]


@dataclass
class ReactResult:
    content: str
    messages: list[Message]
    usage: Usage = field(default_factory=Usage)
    requests: int = 0
    # (tool name, output, the marker the model sees before it) in call order
    tool_outputs: list[tuple[str, str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    digested: bool = False  # the model gave no final answer: `content` is the digest of the tool results

    def digest(self, limit: int = 2000, *, for_model: bool = False) -> str:
        """Stand-in for an empty final answer: the tail of what the tools returned (with the data markers in
        the copy a later request carries)."""
        lines = [
            f"{name}: {marker if for_model else ''}{output.strip()[:400]}"
            for name, output, marker in self.tool_outputs[-5:]
        ]
        return "\n".join(lines)[-limit:]


@dataclass
class ReactLoop:
    llm: ChatModel
    tools: Tools
    ctx: ToolContext
    sink: EventSink
    max_steps: int = 30
    answer_on_budget: bool = True  # chat: one tool-free request when the steps are spent; tasks: fail
    max_format_errors: int = 3  # consecutive steps whose every call was malformed
    before_request: BeforeRequest | None = None
    stream_text: bool = True
    finish_when: FinishWhen | None = None
    _known: set[str] = field(default_factory=set, repr=False)  # tool names offered in this run
    spent: Usage = field(default_factory=Usage)  # every request of this loop, also when `run` raised
    requests: int = 0  # model requests that answered, also when `run` raised
    waited: float = 0.0  # seconds its calls waited for the user's answer to a question (not the task's time)

    async def run(self, messages: list[Message]) -> ReactResult:
        result = ReactResult(content="", messages=messages)
        specs = self.tools.specs()
        self._known = {spec["function"]["name"] for spec in specs}
        format_errors, steps, reasked = 0, 0, False
        while steps < self.max_steps:
            response = await self._ask(result, tools=specs)
            steps += 1
            if not response.tool_calls:
                if _is_empty(response) and not reasked and _worth_reasking(response):
                    reasked = True  # once per run; the re-ask is not counted as a step
                    steps -= 1
                    self._reask_empty(result)
                    continue
                return self._finish(result, response)
            outcomes = await self._run_calls(response.tool_calls, result)
            for call, outcome in zip(response.tool_calls, outcomes, strict=True):
                self._answer(result, call, outcome)
            if self.finish_when is not None and (done := self.finish_when(response.tool_calls, outcomes)) is not None:
                result.content = "\n".join(part for part in (response.content.strip(), done) if part)
                result.finish_reason = "tool_calls"
                return result
            format_errors = format_errors + 1 if all(self._malformed(c) for c in response.tool_calls) else 0
            if format_errors >= self.max_format_errors:
                raise AgentError(
                    f"the model sent malformed tool calls {format_errors} times in a row "
                    f"(last: {response.tool_calls[-1].name!r} with {response.tool_calls[-1].arguments[:200]!r})"
                )
        if not self.answer_on_budget:
            raise AgentError(f"step budget spent: {self.max_steps} model requests without a final answer")
        result.messages.append({"role": "user", "content": BUDGET_SPENT_PROMPT})
        return self._finish(result, await self._ask(result, tools=None))

    async def _ask(self, result: ReactResult, *, tools: list[ToolSpec] | None) -> ChatResponse:
        if self.before_request is not None:
            result.messages[:] = await self.before_request(result.messages)
        task_id = self.ctx.task_id
        on_text = (lambda text: self.sink.emit(TextDelta(task_id=task_id, text=text))) if self.stream_text else None

        def on_reasoning(text: str) -> None:
            self.sink.emit(ReasoningDelta(task_id=task_id, text=text))

        def on_restart() -> None:
            self.sink.emit(ReplyRestarted(task_id=task_id))

        def on_spent(usage: Usage) -> None:  # failed or cancelled after reaching the server: it counts
            result.usage = result.usage + usage
            self.spent = self.spent + usage
            self.sink.emit(ModelUsage(task_id=task_id, usage=usage))

        response = await self.llm.chat(
            result.messages,
            tools=tools,
            on_text=on_text,
            on_reasoning=on_reasoning,
            on_restart=on_restart,
            on_spent=on_spent,
        )
        result.requests += 1
        self.requests += 1
        result.usage = result.usage + response.usage
        self.spent = self.spent + response.usage
        self.sink.emit(ModelUsage(task_id=task_id, usage=response.usage))
        result.messages.append(response.to_message())
        return response

    def _reask_empty(self, result: ReactResult) -> None:
        """Drops the empty reply (an assistant message with nothing in it is refused by some servers) and
        asks once more with a short note."""
        if result.messages and result.messages[-1].get("role") == "assistant":
            result.messages.pop()
        note = EMPTY_AFTER_TOOLS_PROMPT if result.tool_outputs else EMPTY_REPLY_PROMPT
        result.messages.append({"role": "user", "content": note})

    def _finish(self, result: ReactResult, response: ChatResponse) -> ReactResult:
        """The final answer; a reply stopped by the provider or empty is reported as such, and an empty
        one after tool calls becomes the digest of their results, marked."""
        result.finish_reason = reason = response.finish_reason
        if reason in FILTERED:
            raise AgentError(f"the provider's content filter stopped the model's reply (finish_reason: {reason})")
        if reason == "insufficient_system_resource":
            raise AgentError(f"the provider ran out of capacity and cut the reply off (finish_reason: {reason})")
        result.content = response.content.strip()
        if result.content:
            return result
        if reason == "length":
            while_reasoning = " while the model was still reasoning" if response.reasoning else ""
            raise AgentError(
                f"the reply hit the token limit{while_reasoning}, before any answer (finish_reason: length); "
                "raise max_tokens"
            )
        if not result.tool_outputs:
            raise AgentError(EMPTY_ANSWER)
        result.content, result.digested = DIGEST_HEADER + result.digest(), True
        if result.messages and result.messages[-1].get("role") == "assistant":
            marked = DIGEST_HEADER + result.digest(for_model=True)
            result.messages[-1] = {**result.messages[-1], "content": marked}  # no empty reply kept
        return result

    def _answer(self, result: ReactResult, call: ToolCall, outcome: ToolOutcome) -> None:
        result.messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.for_model})
        result.tool_outputs.append((call.name, outcome.output, outcome.marker))

    async def _run_calls(self, calls: list[ToolCall], result: ReactResult | None = None) -> list[ToolOutcome]:
        """Consecutive read-only calls run together; a write or command runs alone, in order.
        Every call gets an outcome even when a sibling failed. Cancelled, every call of the reply is answered
        in `result` before the cancellation travels on (what ran, what a command printed before it was
        stopped, that the rest did not run), so the conversation kept of the turn says what happened."""
        outcomes: dict[str, ToolOutcome] = {}
        index = 0
        try:
            while index < len(calls):
                group = [calls[index]]
                if self.tools.is_read_only(calls[index].name):
                    while index + len(group) < len(calls) and self.tools.is_read_only(calls[index + len(group)].name):
                        group.append(calls[index + len(group)])
                await asyncio.gather(*(self._run_one(call, outcomes) for call in group))
                index += len(group)
        except asyncio.CancelledError:
            if result is not None:
                for call in calls:
                    self._answer(result, call, outcomes.get(call.id) or self.tools.cancelled(call, "", self.ctx))
            raise
        return [outcomes[call.id] for call in calls]

    async def call_tool(self, call: ToolCall) -> ToolOutcome:
        """One call made by the harness rather than the model (a plan task's direct action): the same gate,
        caps, masking and events as a call the model makes."""
        return await self._run_one(call, {})

    async def _run_one(self, call: ToolCall, outcomes: dict[str, ToolOutcome]) -> ToolOutcome:
        task_id = self.ctx.task_id
        arguments = arguments_or_raw(call.arguments)
        summary = self.tools.summary(call.name, arguments)
        self.sink.emit(ToolCallEvent(task_id=task_id, name=call.name, arguments=arguments, summary=summary))

        def on_output(text: str) -> None:
            self.sink.emit(CommandOutput(task_id=task_id, text=text))

        def notice(message: str) -> None:
            self.sink.emit(Notice(level="warning", message=message))

        partial: list[str] = []
        ctx = dataclasses.replace(self.ctx, on_output=on_output, on_cancelled=partial.append, notice=notice)
        if (asked := self.ctx.approve) is not None:

            async def approve(request: ApprovalRequest) -> ApprovalDecision:
                started = time.monotonic()
                try:
                    return await asked(request)
                finally:
                    seconds = time.monotonic() - started
                    self.waited += seconds
                    self.sink.emit(ApprovalWaited(task_id=task_id, seconds=round(seconds, 3)))

            ctx.approve = approve
        try:
            outcome = await self.tools.execute(call, ctx)
        except asyncio.CancelledError:  # what it printed stays on screen and in the conversation
            outcome = outcomes[call.id] = self.tools.cancelled(call, "".join(partial), self.ctx)
            self.sink.emit(ToolResultEvent(task_id=task_id, name=call.name, ok=False, output=outcome.output))
            raise
        outcomes[call.id] = outcome
        self.sink.emit(
            ToolResultEvent(task_id=task_id, name=call.name, ok=outcome.ok, output=outcome.output, diff=outcome.diff)
        )
        return outcome

    def _malformed(self, call: ToolCall) -> bool:
        return call.name not in self._known or not isinstance(arguments_or_raw(call.arguments), dict)


def _is_empty(response: ChatResponse) -> bool:
    return not response.content.strip() and not response.tool_calls


def _worth_reasking(response: ChatResponse) -> bool:
    """An empty reply is asked again unless its finish reason says why (a filter, the token limit):
    asking the same again would not change that."""
    reason = response.finish_reason
    return reason not in FILTERED and reason not in ("length", "insufficient_system_resource")
