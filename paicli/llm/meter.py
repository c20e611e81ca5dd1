"""Usage accounting and the hard token budget, as a wrapper around any ChatModel.

Meters nest: the session's meter wraps the client, a plan's meter wraps the session's, so one request
counts in both. A spent budget refuses to *start* a request; requests already running finish.
The usage is also kept per model (`usage.by_model`): the client counts each reply for the model its
request named, and sums of `Usage` add up per model.
"""

from __future__ import annotations

from typing import Any

from paicli.errors import BudgetExceeded, ModelError
from paicli.llm.capabilities import Capabilities
from paicli.llm.types import ChatModel, ChatResponse, Message, RestartCallback, Retries, TextCallback, ToolSpec, Usage


class MeteredModel:
    def __init__(self, inner: ChatModel, *, budget: int | None = None) -> None:
        self.inner = inner
        self.budget = budget
        self.usage = Usage()
        self.requests = 0
        self.refused = 0  # requests not started because the budget was spent
        self.retries = Retries()  # what the requests took, failed ones included

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def exhausted(self) -> bool:
        return self.budget is not None and self.usage.total >= self.budget

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
        if self.exhausted:
            self.refused += 1
            raise BudgetExceeded(f"budget spent: {self.usage.total:,} of {self.budget:,} tokens used")
        self.requests += 1
        try:
            response = await self.inner.chat(
                messages,
                tools=tools,
                response_format=response_format,
                on_text=on_text,
                model=model,
                max_tokens=max_tokens,
                on_reasoning=on_reasoning,
                on_restart=on_restart,
            )
        except ModelError as error:
            if error.retries:
                self.retries = self.retries + Retries.model_validate(error.retries)
            raise
        self.usage = self.usage + response.usage
        self.retries = self.retries + response.retries
        return response
