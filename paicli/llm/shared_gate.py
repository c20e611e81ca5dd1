"""A rate limit told across processes: several paicli processes on one endpoint (`paicli eval run --jobs N`
runs N agents) each keep their own rate gate (rate_gate.py), so a 429 one of them gets would not hold the
others back, and each would find the limit on its own. With PAICLI_RATE_GATE_FOLDER set (the eval sets it
for its agents), a process that is rate limited writes when the endpoint may be asked again into a file of
that folder named after the endpoint, and every process reads it before it sends: while that time lies
ahead its own gate stays closed until then (its own probe then goes, as after its own 429).

The file holds a wall-clock time (all processes read one clock) and is replaced whole (a reader sees the
old or the new time); two processes closing at once may leave the earlier of their two times, which only
lets a probe go sooner. What is shared is the closing time, not the probe or the concurrency limit."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from paicli.common.atomic_write import write_path

FOLDER_VARIABLE = "PAICLI_RATE_GATE_FOLDER"
MAX_WAIT = 3600.0  # seconds: a time further ahead in the file is not believed (a clock set back, a bad file)


class SharedClosure:
    def __init__(self, folder: Path, endpoint: str, clock: Callable[[], float] = time.time) -> None:
        self.path = folder / (hashlib.sha256(endpoint.encode("utf-8", "surrogatepass")).hexdigest()[:16] + ".until")
        self.clock = clock

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], endpoint: str) -> SharedClosure | None:
        folder = environ.get(FOLDER_VARIABLE)
        return cls(Path(folder), endpoint) if folder and os.path.isabs(folder) else None

    def close_for(self, seconds: float) -> None:
        """Tells the other processes that the endpoint may not be asked for `seconds` from now."""
        until = self.clock() + max(0.0, seconds)
        if until <= self._until():
            return  # someone already closed it for longer
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_path(self.path, repr(until).encode())
        except OSError:
            pass  # sharing is a courtesy: this process's own gate is closed all the same

    def remaining(self) -> float:
        """Seconds until the endpoint may be asked again as another process said; 0 when not closed."""
        left = self._until() - self.clock()
        return left if 0 < left <= MAX_WAIT else 0.0

    def _until(self) -> float:
        try:
            return float(self.path.read_text(encoding="ascii").strip() or 0)
        except (OSError, ValueError):
            return 0.0
