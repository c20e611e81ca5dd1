"""A ChatModel whose requests name one model: how a plan's planner, tasks and summarizer use the models
they are routed to (paicli/plan/routing.py) while sharing one client and one usage meter."""

from __future__ import annotations

from typing import Any

from paicli.llm.capabilities import Capabilities
from paicli.llm.types import ChatModel, ChatResponse, Message, RestartCallback, TextCallback, ToolSpec


class RoutedModel:
    def __init__(self, inner: ChatModel, model: str | None) -> None:
        self.inner = inner
        self.model = model  # None: the client's own model (the session's, which /model switches)

    @property
    def capabilities(self) -> Capabilities:
        """The client's knowledge of the server, with this wrapper's model as the one requests name."""
        return self.inner.capabilities.for_model(self.model)

    async def chat(
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
    ) -> ChatResponse:
        return await self.inner.chat(
            messages,
            tools=tools,
            response_format=response_format,
            on_text=on_text,
            model=model or self.model,
            max_tokens=max_tokens,
            on_reasoning=on_reasoning,
            on_restart=on_restart,
        )
