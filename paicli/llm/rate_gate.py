"""One endpoint's rate-limit gate, shared by every request of the process that goes to that endpoint
(base URL + key): the planner's, every task's, the reviewer's and the summarizer's.

A rate-limited answer (429 or 503) closes the gate for everyone until the server's time has passed (or a
backoff when it named none). While it is closed nothing is sent; when the time has come, one request —
the probe — goes, and the rest keep waiting for its answer: rate limited again closes the gate anew
(with a longer backoff when the server still names no time), anything else opens it for all. A request
that was already in flight when the gate closed may still finish; only the probe (or a request sent
while the gate was open) decides.

Waiting never polls: each waiter sleeps until the reopening time or until the gate changes. Cancelling a
waiter (ESC) ends its wait at once; a cancelled probe hands the turn to the next waiter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from paicli.llm.retry import Backoff

PROBE_FLOOR = 1.0  # seconds: the most a backoff adds to a shorter time the server named, from its 2nd time


class RateBudgetSpent(Exception):
    """Raised by `RateGate.wait_turn` when the gate will not open before the caller's deadline."""

    def __init__(self, reopens_in: float | None) -> None:
        super().__init__("rate limit budget spent")
        self.reopens_in = reopens_in  # seconds until the gate's time, when that is known


@dataclass(frozen=True)
class Closing:
    """What closing the gate did: the wait it now has, and whether this report closed (or re-closed) it
    rather than only confirming a closure someone else had reported."""

    wait: float
    news: bool


class RateGate:
    def __init__(self, backoff: Backoff | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.closed = False
        self.until = 0.0  # clock time before which nothing may be sent while closed
        self.probe_out = False
        self.failures = 0  # rate-limited answers in a row, for the backoff when the server names no time
        self.probes = 0  # probes sent, ever (tests and the soak count them)
        self._waiters: set[asyncio.Future[None]] = set()

    # ---- asked before every attempt ----

    async def wait_turn(self, deadline: float | None = None) -> bool:
        """Returns once this request may be sent: False when the gate is open, True when it is the probe
        (then `limited` or `passed` must follow, or `abandon` if it is not sent). Raises RateBudgetSpent
        when the gate would still be closed at `deadline` (a clock time)."""
        while True:
            now = self.clock()
            if not self.closed:
                return False
            if deadline is not None and now >= deadline:
                raise RateBudgetSpent(None if self.probe_out else max(0.0, self.until - now))
            if now >= self.until and not self.probe_out:
                self.probe_out = True
                self.probes += 1
                return True
            wake_at = self.until if not self.probe_out else None
            if deadline is not None:
                if wake_at is not None and wake_at > deadline:
                    raise RateBudgetSpent(wake_at - now)
                wake_at = deadline if wake_at is None else min(wake_at, deadline)
            await self._changed(None if wake_at is None else max(0.0, wake_at - now))

    def retry_in(self) -> float | None:
        """Seconds until a probe may go; None when the gate is open (0 while a probe is out)."""
        if not self.closed:
            return None
        return 0.0 if self.probe_out else max(0.0, self.until - self.clock())

    # ---- told after every attempt ----

    def limited(self, retry_after: float | None, *, probe: bool) -> Closing:
        """A rate-limited answer: closes the gate until `retry_after` seconds from now (the server's
        time), else for a backoff that grows with each rate-limited answer in a row."""
        now = self.clock()
        news = probe or not self.closed
        self.failures += 1
        if retry_after is None:
            wait = self.backoff.spread(self.failures)
        else:  # the server's time, but one that says 0 again and again is probed at most about once a second
            again = min(PROBE_FLOOR, self.backoff.spread(self.failures - 1)) if self.failures > 1 else 0.0
            wait = max(retry_after, again)
        self.until = max(self.until, now + wait) if self.closed and not probe else now + wait
        self.closed = True
        if probe:
            self.probe_out = False
        self._wake()
        return Closing(wait=max(0.0, self.until - now), news=news)

    def hold(self, seconds: float) -> None:
        """Closed for `seconds` from now because another process was rate limited (shared_gate.py): like
        `limited` with the server's time, but not a rate-limited answer of this process's own."""
        until = self.clock() + seconds
        if self.closed and self.until >= until:
            return
        self.closed, self.until = True, until
        self._wake()

    def passed(self, *, probe: bool) -> None:
        """An answer that was not a rate limit. It opens the gate only if it was the probe (or the gate was
        open when it was sent and still is): a late answer to a request sent before the gate closed says
        nothing about now."""
        if probe or not self.closed:
            self.closed, self.probe_out, self.failures = False, False, 0
            self._wake()

    def abandon(self, *, probe: bool) -> None:
        """The request will not be sent after all (cancelled, or its slot wait was given up)."""
        if probe:
            self.probe_out = False
            self._wake()

    # ---- waiting ----

    async def _changed(self, timeout: float | None) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(future)
        try:
            await asyncio.wait({future}, timeout=timeout)
        finally:
            self._waiters.discard(future)

    def _wake(self) -> None:
        for future in self._waiters:
            if not future.done():
                future.set_result(None)
        self._waiters.clear()
