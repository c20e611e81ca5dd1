"""Wire-level data of the chat-completions protocol that the rest of paicli uses.

Messages stay plain dicts in the OpenAI wire format (role, content, tool_calls, tool_call_id), so they
can be sent as they are; everything the client returns is typed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypedDict

from pydantic import BaseModel

from paicli.common.values import Retries, Usage
from paicli.llm.capabilities import Capabilities

Message = dict[str, Any]
ToolSpec = dict[str, Any]
TextCallback = Callable[[str], None]
RestartCallback = Callable[[], None]
UsageCallback = Callable[[Usage], None]


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
    on_spent: UsageCallback | None


class ChatModel(Protocol):
    """What the agent, planner and reviewer need from a model. `paicli.llm.client.LLMClient` is the real one.

    `response_format` is passed through as the OpenAI `response_format` object. `on_text` receives
    content deltas as they stream, `on_reasoning` the deltas of a reasoning model's thinking. Errors
    raise `paicli.common.errors.ModelError`; cancelling the awaiting task closes the stream at once.
    `capabilities` is what the server is known to accept (shared by wrappers). `on_restart` is called when
    a reply that had started streaming broke off and is asked again: what `on_text` and `on_reasoning`
    received so far is void, the new reply streams from its beginning. Every request that reached the server
    counts: a reply's `usage` includes its attempts that broke off, and `on_spent` is told what a call that
    ends without a reply (it failed, or was cancelled) cost, before the error or the cancellation travels on.
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
        on_spent: UsageCallback | None = None,
    ) -> Awaitable[ChatResponse]: ...
