"""Wire-level data of the chat-completions protocol that the rest of paicli uses.

Messages stay plain dicts in the OpenAI wire format (role, content, tool_calls, tool_call_id), so they
can be sent as they are; everything the client returns is typed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypedDict, TypeVar

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from paicli.llm.capabilities import Capabilities

Message = dict[str, Any]
ToolSpec = dict[str, Any]
TextCallback = Callable[[str], None]
RestartCallback = Callable[[], None]


class ModelTokens(BaseModel):
    """The tokens of the requests sent to one model (a value of `Usage.by_model`); `cached_tokens`, the
    prompt tokens its provider served from its cache, is written out only when there are any."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: ModelTokens) -> ModelTokens:
        return ModelTokens(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @model_serializer(mode="wrap")
    def _cached_when_any(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.cached_tokens:
            data.pop("cached_tokens", None)
        return data


class Usage(BaseModel):
    """Tokens used. `by_model` splits them by the model each request named (the client fills it in for
    its own requests). Also `cached_tokens` (prompt tokens the provider served from its cache) and
    `estimated` (true when any part of the total was counted by paicli's estimate, paicli/llm/tokens.py,
    because the server reported none; kept through sums). Each is written out only when it says something."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_model: dict[str, ModelTokens] = Field(default_factory=dict)
    cached_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def of_model(self, model: str) -> Usage:
        """These tokens, all counted for `model`."""
        tokens = ModelTokens(
            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens, cached_tokens=self.cached_tokens
        )
        return self.model_copy(update={"by_model": {model: tokens}})

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            by_model=_merged(self.by_model, other.by_model),
            cached_tokens=self.cached_tokens + other.cached_tokens,
            estimated=self.estimated or other.estimated,
        )

    @model_serializer(mode="wrap")
    def _additions_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("by_model", "cached_tokens", "estimated"):
            if not getattr(self, key):
                data.pop(key, None)
        return data


class Retries(BaseModel):
    """Model requests retried, by kind, and the seconds they spent waiting (summed over requests that wait
    side by side); a plan's tally is in `plan_finished`. `rate_limited`: 429/503, retried on a time
    budget; `errors`: connection failures, 408 and other 5xx; `streams`: a stream that broke off, asked
    again; `timeouts`: no answer within `read_timeout`."""

    rate_limited: int = 0
    errors: int = 0
    streams: int = 0
    timeouts: int = 0
    waited_seconds: float = 0.0

    @property
    def total(self) -> int:
        return self.rate_limited + self.errors + self.streams + self.timeouts

    def __add__(self, other: Retries) -> Retries:
        return Retries(
            rate_limited=self.rate_limited + other.rate_limited,
            errors=self.errors + other.errors,
            streams=self.streams + other.streams,
            timeouts=self.timeouts + other.timeouts,
            waited_seconds=round(self.waited_seconds + other.waited_seconds, 3),
        )


class ModelEstimate(BaseModel):
    """What the requests expected of one model come to (a value of `Estimate.by_model`)."""

    requests: int = 0
    prompt_tokens: int = 0

    def __add__(self, other: ModelEstimate) -> ModelEstimate:
        return ModelEstimate(
            requests=self.requests + other.requests, prompt_tokens=self.prompt_tokens + other.prompt_tokens
        )


class Estimate(BaseModel):
    """Model requests and prompt tokens expected before something runs (see paicli/plan/estimate.py).

    Additions, written out only when known: `by_model` (the same split by model), `task_models` (task
    id → the model that runs it; a direct action has none) and `cost` (the prompt tokens priced, only when
    a price is configured for every model in `by_model`; completion tokens are not estimated)."""

    requests: int = 0
    prompt_tokens: int = 0
    by_model: dict[str, ModelEstimate] = Field(default_factory=dict)
    task_models: dict[str, str] = Field(default_factory=dict)
    cost: float | None = None

    def __add__(self, other: Estimate) -> Estimate:
        """The sum; its cost is known only when both are."""
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Estimate(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            by_model=_merged(self.by_model, other.by_model),
            task_models={**self.task_models, **other.task_models},
            cost=cost,
        )

    @model_serializer(mode="wrap")
    def _additions_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {
            key: value for key, value in data.items() if key in ("requests", "prompt_tokens") or value not in (None, {})
        }


_Summable = TypeVar("_Summable", ModelTokens, ModelEstimate)


def _merged(a: dict[str, _Summable], b: dict[str, _Summable]) -> dict[str, _Summable]:
    merged = dict(a)
    for name, value in b.items():
        merged[name] = merged[name] + value if name in merged else value
    return merged


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # the raw JSON text as the model sent it; parsed and validated by the tool box

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


class ChatResponse(BaseModel):
    content: str = ""
    reasoning: str = ""  # what a reasoning model thought before answering; never part of `content`
    tool_calls: list[ToolCall] = []
    finish_reason: str | None = None
    usage: Usage = Usage()
    retries: Retries = Retries()  # what it took to get this reply

    def to_message(self) -> Message:
        """The assistant message to append to the conversation. Its reasoning travels as
        `reasoning_content`; the client decides per model whether it is sent back (paicli/llm/reasoning.py)."""
        message: Message = {"role": "assistant", "content": self.content or None}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        return message


class ChatOptions(TypedDict, total=False):
    """The keyword arguments of `ChatModel.chat`, for wrappers that pass them on (`**options`)."""

    tools: list[ToolSpec] | None
    response_format: dict[str, Any] | None
    on_text: TextCallback | None
    model: str | None
    max_tokens: int | None
    on_reasoning: TextCallback | None
    on_restart: RestartCallback | None


class ChatModel(Protocol):
    """What the agent, planner and reviewer need from a model. `paicli.llm.client.LLMClient` is the real one.

    `response_format` is passed through as the OpenAI `response_format` object. `on_text` receives
    content deltas as they stream, `on_reasoning` the deltas of a reasoning model's thinking. Errors
    raise `paicli.errors.ModelError`; cancelling the awaiting task closes the stream at once.
    `capabilities` is what the server is known to accept (shared by wrappers). `on_restart` is called when
    a reply that had started streaming broke off and is asked again: what `on_text` and `on_reasoning`
    received so far is void, the new reply streams from its beginning.
    """

    @property
    def capabilities(self) -> Capabilities: ...

    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        on_text: TextCallback | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        on_reasoning: TextCallback | None = None,
        on_restart: RestartCallback | None = None,
    ) -> Awaitable[ChatResponse]: ...
