"""Telling a user who looked away that a plan needs them: the terminal bell and an OSC 9 notification
(terminals that support it, such as iTerm2, WezTerm, Windows Terminal or kitty, show a desktop
notification; the others ignore it). Sent when a plan waits for review or finishes, once it has run
longer than `notify_after` seconds (a user who waited three seconds is still watching); `notify =
false` turns it off."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from typing import IO

BELL = "\a"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def notification(message: str) -> str:
    """The bytes to write: a bell, then OSC 9 with `message` (control characters removed, so nothing in
    it can end the sequence early or start another)."""
    text = _CONTROL.sub(" ", message).strip()[:200]
    return f"{BELL}\x1b]9;{text}\x07"


class Notifier:
    """Started when a plan starts; each call notifies if it is enabled and the plan is old enough."""

    def __init__(
        self,
        write: Callable[[str], None],
        *,
        enabled: bool,
        after: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write = write
        self.enabled = enabled
        self.after = after
        self._clock = clock
        self._started = clock()

    def __call__(self, message: str) -> bool:
        """Notifies (and returns True) when enabled and the plan has run long enough."""
        if not self.enabled or self._clock() - self._started < self.after:
            return False
        self._write(notification(message))
        return True

    @contextlib.contextmanager
    def reviewing(self) -> Iterator[None]:
        """Around a plan review: notifies as it starts waiting; the time spent reading the review does not
        count towards the plan's run time."""
        self("plan ready for review")
        try:
            yield
        finally:
            self._started = self._clock()


def terminal_notifier(stream: IO[str], *, enabled: bool, after: float) -> Notifier:
    """A notifier that writes to the terminal's stream at once."""

    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    return Notifier(write, enabled=enabled, after=after)
