"""One endpoint's shared traffic control: its rate gate (paicli/llm/rate_gate.py) and its adaptive
concurrency limit (paicli/llm/concurrency.py). Created once per process where the client is created
(paicli/runtime.py) and handed to it, so the planner, every task, the reviewer and the summarizer share it.

Every attempt is admitted first — the gate, then a place in flight, then the gate again (it may have
closed while the request waited for its place) — and reported afterwards, so both can adapt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from paicli.llm.concurrency import AdaptiveLimit, Slot
from paicli.llm.rate_gate import Closing, RateGate
from paicli.llm.retry import Backoff
from paicli.llm.shared_gate import SharedClosure

DEFAULT_MAX_IN_FLIGHT = 64  # a client made without an endpoint (tests, benchmarks): effectively unbounded


@dataclass(frozen=True)
class Admission:
    slot: Slot
    probe: bool  # this request decides whether the gate opens again


@dataclass(frozen=True)
class RateStatus:
    """What the live view shows while rate limiting holds requests back: "rate limited: 3 of 12 running,
    retry in 4 s"."""

    limit: int  # requests allowed in flight now
    maximum: int
    retry_in: float | None  # seconds until the gate lets a probe through; None when open

    def line(self) -> str:
        return f"rate limited: {self.detail()}"

    def detail(self) -> str:
        """`3 of 12 running, retry in 4 s`."""
        text = f"{self.limit} of {self.maximum} running"
        if self.retry_in is not None:
            text += f", retry in {self.retry_in:.0f} s" if self.retry_in >= 0.5 else ", retrying"
        return text


class Endpoint:
    def __init__(
        self,
        *,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedClosure | None = None,
    ) -> None:
        self.gate = RateGate(backoff, clock)
        self.limit = AdaptiveLimit(max_in_flight)
        self.clock = clock
        self.shared = shared  # other processes' rate limits on this endpoint (shared_gate.py); None: this one's

    async def admit(self, deadline: float | None = None) -> Admission:
        """Waits until this request may be sent (RateBudgetSpent past `deadline`); `finish` must follow."""
        while True:
            if self.shared is not None and (left := self.shared.remaining()) > 0:
                self.gate.hold(left)  # another process was told to wait: so are we
            probe = await self.gate.wait_turn(deadline)
            try:
                slot = await self.limit.acquire()
            except BaseException:
                self.gate.abandon(probe=probe)
                raise
            if probe or not self.gate.closed:
                return Admission(slot, probe)
            self.limit.release()  # the gate closed while we waited for the place: wait for it again

    def finish(
        self,
        admission: Admission,
        outcome: Literal["ok", "limited", "failed", "cancelled"],
        retry_after: float | None = None,
    ) -> Closing | None:
        """Reports the attempt's outcome; for a rate limit, how the gate closed."""
        self.limit.release()
        if outcome == "cancelled":
            self.gate.abandon(probe=admission.probe)
            return None
        if outcome == "limited":
            self.limit.limited(admission.slot)
            closing = self.gate.limited(retry_after, probe=admission.probe)
            if self.shared is not None:
                self.shared.close_for(closing.wait)
            return closing
        if outcome == "ok":
            self.limit.succeeded()
        self.gate.passed(probe=admission.probe)
        return None

    def status(self) -> RateStatus | None:
        """None while nothing is held back."""
        retry_in = self.gate.retry_in()
        if retry_in is None and self.limit.limit >= self.limit.maximum:
            return None
        return RateStatus(self.limit.limit, self.limit.maximum, retry_in)
