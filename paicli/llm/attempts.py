"""One logical model request across its attempts (paicli/llm/client.py): what it counted, how long it
waited, its rate limit budget, whether its reply had started streaming, what its attempts without a reply
cost; and which tally a fault counts in.

An attempt that reached the server costs tokens even when no reply comes of it: the stream broke off or
ended early, or the request was cancelled while the server worked on it. It counts once its body was sent
(or an answer other than an HTTP error came back; an error answer costs nothing): the usage the server
sent before it stopped, else the estimate (paicli/llm/tokens.py) of the prompt and of what had streamed,
marked `estimated`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2

from paicli.common.errors import ModelError, ModelHTTPError, ModelProtocolError
from paicli.common.values import Retries, Usage
from paicli.llm.sse import ReplyAssembler
from paicli.llm.tokens import estimate_completion, estimate_prompt, fill_in
from paicli.llm.types import TextCallback


class RetryLater(ModelHTTPError):
    """An HTTP failure that carries the server's `Retry-After`, if any."""

    def __init__(self, message: str, status: int, retry_after: float | None) -> None:
        super().__init__(message, status, retryable=True)
        self.retry_after = retry_after


@dataclass
class RequestState:
    """One logical request across its attempts: counts, the rate limit budget, what was streamed."""

    on_text: TextCallback | None
    on_reasoning: TextCallback | None
    attempt: int = 1  # counted attempts (rate-limited ones are not counted)
    adaptations: int = 0
    delivered: bool = False  # this attempt's reply has streamed something to the callbacks
    limited_since: float | None = None  # when the rate limit budget started
    last_limit: RetryLater | None = None
    rate_limited: int = 0
    errors: int = 0
    streams: int = 0
    timeouts: int = 0
    waited: float = 0.0
    spent: Usage = field(default_factory=Usage)  # what its attempts without a reply cost (module docstring)
    reached: bool = False  # the current attempt reached the server
    assembler: ReplyAssembler = field(default_factory=ReplyAssembler)  # the current attempt's reply

    def begin(self) -> ReplyAssembler:
        """A new attempt: its reply streams to this request's callbacks."""
        self.reached = False
        self.assembler = ReplyAssembler(self.text, self.reasoning)
        return self.assembler

    def sent(self, name: str, info: dict[str, Any]) -> None:
        """The HTTP stack's trace: once the request's body is sent, the server has the prompt."""
        if name.endswith("send_request_body.complete"):
            self.reached = True

    def answered(self, status: int) -> None:
        """An error answer costs nothing; any other answer means the server took the request."""
        self.reached = status < 400

    def spend(self, body: dict[str, Any]) -> None:
        """The current attempt ends without a reply: what it cost (nothing when it never reached the server)
        counts, for the model its request named."""
        if not self.reached:
            return
        self.reached = False
        content, reasoning, calls = self.assembler.so_far()
        prompt = estimate_prompt(body["messages"], body.get("tools"))
        usage = fill_in(self.assembler.usage, prompt, estimate_completion(content, reasoning, calls))
        self.spent = self.spent + usage.of_model(body["model"])

    def text(self, delta: str) -> None:
        self.delivered = True
        if self.on_text is not None:
            self.on_text(delta)

    def reasoning(self, delta: str) -> None:
        self.delivered = True
        if self.on_reasoning is not None:
            self.on_reasoning(delta)

    def count(self, kind: Literal["errors", "streams", "timeouts"]) -> None:
        if kind == "errors":
            self.errors += 1
        elif kind == "streams":
            self.streams += 1
        else:
            self.timeouts += 1

    def tally(self) -> Retries:
        return Retries(
            rate_limited=self.rate_limited,
            errors=self.errors,
            streams=self.streams,
            timeouts=self.timeouts,
            waited_seconds=round(self.waited, 3),
        )


def fault_kind(error: ModelError) -> Literal["errors", "streams", "timeouts"]:
    """Which tally a retried fault counts in."""
    if isinstance(error.__cause__, httpx2.TimeoutException) and not isinstance(error.__cause__, httpx2.ConnectTimeout):
        return "timeouts"
    if "hung" in str(error) or "read timeout" in str(error):
        return "timeouts"
    return "streams" if isinstance(error, ModelProtocolError) else "errors"
