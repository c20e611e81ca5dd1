"""A reasoning model's thinking in the chat view: dimmed and live while it streams (its tail, under
"Thinking… 3.1s"), collapsed to one line when the answer starts ("✻ Thought for 12 s"); `/thinking` shows
the last one in full. The text is untrusted model output: it is sanitized and never parsed as markup."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.text import Text

from paicli.common.sanitize import terminal_safe

TAIL_LINES = 6


class Thinking:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last = ""  # the latest finished thinking, for /thinking
        self._parts: list[str] = []
        self._since: float | None = None

    @property
    def active(self) -> bool:
        return self._since is not None

    def add(self, text: str) -> None:
        if self._since is None:
            self._since = self.clock()
        self._parts.append(text)

    def restart(self) -> None:
        """The reply broke off and is asked again: its thinking so far is void (its time still counts)."""
        self._parts = []

    def close(self) -> str | None:
        """Ends the thinking under way; returns its one-line summary, or None if there was none."""
        if self._since is None:
            return None
        seconds = self.clock() - self._since
        self.last, self._parts, self._since = "".join(self._parts).strip(), [], None
        return f"✻ Thought for {thought_time(seconds)} · /thinking shows it"

    def preview(self, width: int, rows: int) -> RenderableType:
        """The tail of the thinking so far, dimmed, at most `rows` lines of `width`."""
        text = terminal_safe("".join(self._parts)).strip()
        lines = text.split("\n")[-min(TAIL_LINES, max(1, rows)) :]
        tail = "\n".join(line[-width:] if len(line) > width else line for line in lines)
        return Text(tail, style="dim italic")


def thought_time(seconds: float) -> str:
    """`0.4 s`, `12 s`, `2 min 05 s`."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{round(seconds)} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def with_thinking(header: RenderableType, thinking: Thinking, width: int, rows: int) -> RenderableType:
    return Group(header, thinking.preview(width, rows - 1)) if thinking.active else header
