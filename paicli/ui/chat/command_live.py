"""A tool call while it runs: how long it has been running, the last lines of a command's output as they
come (`command_output` events), "Esc cancels", and the toolbar below, so the screen never sits still.

`RunningCall` is pure state and one renderable; ui/chat/render.py draws it in its transient live region.
Output is untrusted: it is sanitized as it arrives and only ever shown as `Text`.
"""

from __future__ import annotations

from collections import deque

from rich.console import Group, RenderableType
from rich.text import Text

from paicli.common.sanitize import terminal_safe
from paicli.ui.chat.one_row import OneRow

SHOWN_OUTPUT_LINES = 5
PARTIAL_CHARS = 2000  # of a line still being written (a progress bar without newlines)
APPEAR_AFTER = 0.3  # seconds: a call that ends sooner is never drawn, so quick reads do not flicker


class RunningCall:
    def __init__(self, name: str, started: float) -> None:
        self.name = name
        self.started = started
        self.lines: deque[str] = deque(maxlen=SHOWN_OUTPUT_LINES)
        self._partial = ""
        self.received = 0  # characters of output so far

    def add_output(self, text: str) -> None:
        self.received += len(text)
        pieces = (self._partial + text.replace("\r\n", "\n")).split("\n")
        for line in pieces[:-1]:
            self.lines.append(_last_frame(line))
        self._partial = pieces[-1][-PARTIAL_CHARS:]

    def last_lines(self) -> list[str]:
        partial = _last_frame(self._partial)
        lines = [*self.lines, partial] if partial.strip() else list(self.lines)
        return [terminal_safe(line) for line in lines[-SHOWN_OUTPUT_LINES:]]

    def renderable(self, elapsed: str, status_line: str = "") -> RenderableType:
        """`elapsed` is the running time as the caller formats it (`3.2s`)."""
        header = Text.assemble(
            ("  ⎿ ", "dim"),
            ("running ", "dim bold"),
            (elapsed, "bold"),
            (" · Esc cancels", "dim"),
        )
        parts: list[RenderableType] = [header]
        parts += [OneRow(Text("    " + line, style="dim")) for line in self.last_lines()]
        if status_line:
            parts.append(OneRow(Text(" " + terminal_safe(status_line), style="reverse")))
        return Group(*parts)


def _last_frame(line: str) -> str:
    """What a terminal would show of a line redrawn with carriage returns (a progress bar): its last frame."""
    frames = [frame for frame in line.split("\r") if frame]
    return frames[-1] if frames else ""
