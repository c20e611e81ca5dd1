"""Ctrl+C at the prompt, as in the other terminal agents: on a line with text it clears the line; on an empty
line the first press says how to leave (`EXIT_HINT`) and a second within `EXIT_WITHIN` seconds leaves."""

from __future__ import annotations

import time
from collections.abc import Callable

EXIT_WITHIN = 2.0  # seconds
EXIT_HINT = "Ctrl+C again to exit · Ctrl+D exits"


class DoubleInterrupt:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._armed: float | None = None  # when Ctrl+C was last pressed on an empty line

    def exits(self, line: str) -> bool:
        """Ctrl+C was pressed with `line` in the prompt: whether that leaves the REPL (else the caller clears
        the line, and says `EXIT_HINT` when the line was empty)."""
        now = self.clock()
        if line.strip():
            self._armed = None
            return False
        if self._armed is not None and now - self._armed <= EXIT_WITHIN:
            return True
        self._armed = now
        return False
