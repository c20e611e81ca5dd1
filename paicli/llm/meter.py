"""Usage accounting and the hard token budget, as a wrapper around any ChatModel.

Meters nest: the session's meter wraps the client, a plan's meter wraps the session's, so one request
counts in both. A request that failed or was cancelled after it reached the server counts what it cost
(`on_spent`, paicli/llm/types.py). A spent budget refuses to *start* a request; requests already running finish.
The usage is also kept per model (`usage.by_model`): the client counts each reply for the model its
request named, and sums of `Usage` add up per model.
"""

from __future__ import annotations

from typing import Unpack

from paicli.common.errors import BudgetExceeded, ModelError
from paicli.common.values import Retries, Usage
from paicli.llm.capabilities import Capabilities
from paicli.llm.types import ChatModel, ChatOptions, ChatResponse, Message


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

    async def chat(self, messages: list[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        if self.exhausted:
            self.refused += 1
            raise BudgetExceeded(f"budget spent: {self.usage.total:,} of {self.budget:,} tokens used")
        self.requests += 1
        told = options.get("on_spent")

        def spent(usage: Usage) -> None:  # a request that ended without a reply (failed, cancelled) counts too
            self.usage = self.usage + usage
            if told is not None:
                told(usage)

        options["on_spent"] = spent
        try:
            response = await self.inner.chat(messages, **options)
        except ModelError as error:
            if error.retries:
                self.retries = self.retries + Retries.model_validate(error.retries)
            raise
        self.usage = self.usage + response.usage
        self.retries = self.retries + response.retries
        return response
