"""The retry table and the wait before the next attempt."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from paicli.llm.retry import Backoff, is_retryable_status, parse_retry_after


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (408, True),
        (429, True),
        (500, True),
        (503, True),
        (599, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (422, False),
    ],
)
def test_which_statuses_are_retried(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_retry_after_in_seconds_ms_or_http_date() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": formatdate(now + 7, usegmt=True)}, now=now) == 7.0
    assert parse_retry_after({"retry-after": formatdate(now - 60, usegmt=True)}, now=now) == 0.0


@pytest.mark.parametrize("headers", [{}, {"retry-after": ""}, {"retry-after": "soon"}, {"retry-after": "-"}])
def test_unreadable_or_missing_retry_after_is_none(headers: dict[str, str]) -> None:
    assert parse_retry_after(headers) is None


def test_backoff_is_exponential_with_full_jitter_and_capped() -> None:
    top = Backoff(base=1.0, cap=30.0, random=lambda: 1.0)
    assert [top.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    assert Backoff(base=1.0, cap=30.0, random=lambda: 0.25).delay(3) == 1.0
    assert Backoff(random=lambda: 0.0).delay(5) == 0.0


def test_the_servers_wait_wins_but_is_capped() -> None:
    backoff = Backoff(base=1.0, cap=10.0, random=lambda: 1.0)
    assert backoff.delay(1, retry_after=3.0) == 3.0
    assert backoff.delay(1, retry_after=120.0) == 10.0


def test_rate_limit_reset_headers_in_their_common_spellings() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"x-ratelimit-reset-requests": "6m0s"}, now=now) == 360.0
    assert parse_retry_after({"x-ratelimit-reset-tokens": "1m30.5s"}, now=now) == 90.5
    assert parse_retry_after({"x-ratelimit-reset-requests": "20ms"}, now=now) == 0.02
    assert parse_retry_after({"x-ratelimit-reset-requests": "2"}, now=now) == 2.0
    assert parse_retry_after({"x-ratelimit-reset-requests": str(now + 5)}, now=now) == 5.0  # a Unix time
    assert parse_retry_after({"x-ratelimit-reset-tokens": "2023-11-14T22:13:25Z"}, now=now) == 5.0
    assert parse_retry_after({"x-ratelimit-reset-tokens": "soon"}, now=now) is None


def test_the_exhausted_limits_reset_is_the_one_taken_else_the_longest() -> None:
    both = {"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "30s"}
    assert parse_retry_after(both) == 30.0
    assert parse_retry_after({**both, "x-ratelimit-remaining-requests": "0"}) == 1.0
    assert parse_retry_after({**both, "retry-after": "3"}) == 3.0  # Retry-After wins


def test_the_gate_backoff_never_drops_near_zero() -> None:
    low = Backoff(base=1.0, cap=8.0, random=lambda: 0.0)
    high = Backoff(base=1.0, cap=8.0, random=lambda: 1.0)
    assert [low.spread(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [high.spread(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 8.0, 8.0]
