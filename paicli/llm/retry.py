"""When a failed model request is worth another try, and how long to wait before it.

Two kinds of retry, each with its own budget (the client, paicli/llm/client.py, applies them):

- **Rate limits** (HTTP 429, and 503 which providers send when overloaded) are retried until a time budget
  per request is spent (`rate_limit_wait`, default 120 s), not a count: the endpoint's gate
  (paicli/llm/rate_gate.py) holds every request until the server's time has passed. The time comes from
  `retry-after-ms`, `Retry-After` (seconds or an HTTP date), or the reset headers
  `x-ratelimit-reset-requests` / `-tokens` (a duration such as `6m0s`, `20ms`, `1.5`, or a date); without
  any, exponential backoff with jitter.
- **Other transient faults** keep an attempt count (`max_attempts`): connection failures and timeouts,
  HTTP 408 and other 5xx, a stream that broke off or hung (read timeout), before or after the reply had
  started, since no tool of a reply runs before the whole reply arrived.

Never retried: other 4xx, whose answer will not change, and a 429 that says the account's quota or balance
is spent (OpenAI's `insufficient_quota`), which no wait cures. The wait between counted attempts is exponential
backoff with full jitter (uniform between 0 and min(cap, base * 2 ** (attempt - 1))).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

RESET_HEADERS = ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
EPOCH_THRESHOLD = 1_000_000_000  # a bare number this large is a Unix time, not a number of seconds


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


def is_rate_limit(status: int) -> bool:
    """Answers that mean "not now, the endpoint is busy": retried on a time budget, through the gate."""
    return status in (429, 503)


QUOTA_SPENT_CODES = ("insufficient_quota", "insufficient_balance", "billing_hard_limit_reached")
QUOTA_SPENT_WORDS = ("exceeded your current quota", "insufficient balance", "insufficient_quota")


def quota_spent(body: str) -> bool:
    """A 429 that is not a rate limit but an account out of credit (OpenAI's `insufficient_quota`): waiting
    does not help, so it is not retried."""
    lowered = body.lower()
    return any(code in lowered for code in QUOTA_SPENT_CODES + QUOTA_SPENT_WORDS)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say (or said something unreadable).
    `retry-after-ms` wins over `Retry-After`, which wins over the rate-limit reset headers."""
    now = time.time() if now is None else now
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        when = _http_date(value)
        if when is not None:
            return max(0.0, when - now)
    return _reset_wait(headers, now)


def _reset_wait(headers: Mapping[str, str], now: float) -> float | None:
    """The wait the reset headers give: the exhausted limit's (its `x-ratelimit-remaining-*` is 0) when
    known, else the longest one given."""
    waits: dict[str, float] = {}
    for name in RESET_HEADERS:
        wait = parse_reset(headers.get(name) or "", now)
        if wait is not None:
            waits[name] = wait
    exhausted = [w for name, w in waits.items() if headers.get(name.replace("reset", "remaining"), "").strip() == "0"]
    chosen = exhausted or list(waits.values())
    return max(chosen) if chosen else None


def parse_reset(value: str, now: float) -> float | None:
    """A reset header's value as seconds from `now`: `6m0s`, `1m30.5s`, `20ms`, `2` (seconds), a Unix time,
    an ISO 8601 or HTTP date. None when unreadable."""
    value = value.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, number - now if number >= EPOCH_THRESHOLD else number)
    parts = _DURATION.findall(value)
    if parts and "".join(amount + unit for amount, unit in parts) == value:
        return sum(float(amount) * _UNIT_SECONDS[unit] for amount, unit in parts)
    try:
        when: float | None = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        when = _http_date(value)
    return None if when is None else max(0.0, when - now)


def _http_date(value: str) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return None if when.tzinfo is None else when.timestamp()


@dataclass(frozen=True)
class Backoff:
    base: float = 1.0
    cap: float = 30.0
    random: Callable[[], float] = random.random

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after the `failed_attempt`-th attempt (1-based) failed: full jitter."""
        if retry_after is not None:
            return min(retry_after, self.cap)
        return float(self.random() * self._ceiling(failed_attempt))

    def spread(self, failures: int) -> float:
        """Equal jitter (between half and all of the exponential delay): how long a rate limit without a
        stated time closes the gate after `failures` rate-limited answers in a row. Never near zero, so
        the probes of a storm stay a few a second at most."""
        ceiling = self._ceiling(failures)
        return float(ceiling / 2 + self.random() * ceiling / 2)

    def _ceiling(self, failures: int) -> float:
        return float(min(self.cap, self.base * 2 ** (max(1, failures) - 1)))
