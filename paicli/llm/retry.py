"""When a failed model request is worth another try, and how long to wait before it.

Retried: connection failures and timeouts, HTTP 408, 429 and 5xx, and a stream that broke off before
any content arrived (decided by the client, which knows what was received). Never retried: other 4xx,
whose answer will not change. The wait is exponential backoff with full jitter
(uniform between 0 and min(cap, base * 2 ** (attempt - 1))), unless the server said how long to wait
(`Retry-After` in seconds or as an HTTP date, or `retry-after-ms`); both are capped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say (or said something unreadable)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class Backoff:
    base: float = 1.0
    cap: float = 30.0
    random: Callable[[], float] = random.random

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after the `failed_attempt`-th attempt (1-based) failed."""
        if retry_after is not None:
            return min(retry_after, self.cap)
        return float(self.random() * min(self.cap, self.base * 2 ** (failed_attempt - 1)))
