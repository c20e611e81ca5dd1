"""One logical model request across its attempts (paicli/llm/client.py): what it counted, how long it
waited, its rate limit budget, whether its reply had started streaming; and which tally a fault counts in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx2

from paicli.common.errors import ModelError, ModelHTTPError, ModelProtocolError
from paicli.common.values import Retries
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
