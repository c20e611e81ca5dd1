"""A live region redrawn after the terminal got narrower.

rich redraws a live region by moving the cursor up as many rows as it drew last time. Most terminals
(VTE, kitty, iTerm2, Windows Terminal, tmux, ...) reflow the screen when it gets narrower: a line wider
than the new width now takes several rows, so that move stops short and a garbled copy of the region
stays above it. Before the next redraw, `Reflow` tells rich how many rows its last drawing takes at the
new width. (A terminal that cuts lines instead of reflowing them, such as xterm, then loses as many rows
of what was printed above the region: blank rows, not a garbled table.)
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.live import Live
from rich.segment import Segment


def rows_after_reflow(widths: Sequence[int], columns: int) -> int:
    """The rows lines of these widths take on a screen `columns` wide that wraps them."""
    return sum(max(1, -(-width // max(1, columns))) for width in widths)


class Reflow:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._drawn: tuple[RenderableType, int] | None = None  # the last drawing and the width it had

    def drawn(self, renderable: RenderableType) -> None:
        self._drawn = (renderable, self.console.width)

    def before_redraw(self, live: Live) -> None:
        """Call before `live` draws again (or stops): corrects the rows it will move up over."""
        if self._drawn is None:
            return
        renderable, width = self._drawn
        columns = self.console.width
        shape = live._live_render._shape  # rich has no public way to say how tall the last drawing is now
        if columns >= width or shape is None:
            return
        lines = self.console.render_lines(renderable, self.console.options.update_width(width), pad=False)
        widths = [Segment.get_line_length(line) for line in lines[: shape[1]]]
        live._live_render._shape = (shape[0], max(shape[1], rows_after_reflow(widths, columns)))
        self._drawn = (renderable, columns)
