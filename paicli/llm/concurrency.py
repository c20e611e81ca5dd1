"""How many model requests of one endpoint may be in flight at once, adapted to what the server takes
(AIMD, as TCP does): a rate-limited answer halves the limit (once per episode: answers to requests sent
before the last cut do not cut again), and every window of successes as long as the limit adds one,
between 1 and the maximum (`--max-parallel`). Shared like the gate, by every request of the process.

Requests over the limit wait in arrival order; lowering the limit never interrupts a request already in
flight, it only holds back new ones until enough have finished.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """A place in flight; `epoch` is the limit's epoch when it was taken (see `AdaptiveLimit.limited`)."""

    epoch: int


class AdaptiveLimit:
    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.in_flight = 0
        self.epoch = 0  # grows with every cut
        self._successes = 0  # since the limit last changed
        self._queue: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self) -> Slot:
        if self.in_flight < self.limit and not self._queue:
            self.in_flight += 1
            return Slot(self.epoch)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(future)
        try:
            await future  # set by `_admit`, which counted us in flight already
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.in_flight -= 1  # admitted and cancelled in the same moment: give the place back
                self._admit()
            else:
                with contextlib.suppress(ValueError):  # already dropped by `_admit`
                    self._queue.remove(future)
            raise
        return Slot(self.epoch)

    def release(self) -> None:
        self.in_flight -= 1
        self._admit()

    def succeeded(self) -> None:
        """Additive increase: one more after `limit` successes since the limit last changed."""
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.maximum:
            self.limit += 1
            self._successes = 0
            self._admit()

    def limited(self, slot: Slot) -> bool:
        """Multiplicative decrease, unless the limit was already cut after this request was sent. True when
        it was cut."""
        if slot.epoch != self.epoch:
            return False
        self.limit = max(1, self.limit // 2)
        self.epoch += 1
        self._successes = 0
        return True

    def _admit(self) -> None:
        while self._queue and self.in_flight < self.limit:
            future = self._queue.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)
