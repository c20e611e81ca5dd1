"""A ChatModel whose requests name one model: how a plan's planner, tasks and summarizer use the models
they are routed to (paicli/plan/routing.py) while sharing one client and one usage meter."""

from __future__ import annotations

from typing import Unpack

from paicli.llm.capabilities import Capabilities
from paicli.llm.types import ChatModel, ChatOptions, ChatResponse, Message


class RoutedModel:
    def __init__(self, inner: ChatModel, model: str | None) -> None:
        self.inner = inner
        self.model = model  # None: the client's own model (the session's, which /model switches)

    @property
    def capabilities(self) -> Capabilities:
        """The client's knowledge of the server, with this wrapper's model as the one requests name."""
        return self.inner.capabilities.for_model(self.model)

    async def chat(self, messages: list[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        """The inner model's `chat`, naming this wrapper's model unless the call names one."""
        options["model"] = options.get("model") or self.model
        return await self.inner.chat(messages, **options)
