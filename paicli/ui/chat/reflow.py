"""A live region redrawn after the terminal got narrower.

rich redraws a live region by moving the cursor up as many rows as it drew last time. Most terminals
(VTE, kitty, iTerm2, Windows Terminal, tmux, ...) reflow the screen when it gets narrower: a line wider
than the new width now takes several rows, so that move stops short and a garbled copy of the region
stays above it. Before each redraw, `ReflowingLive` tells rich how many rows its last drawing takes at
the new width; every live region uses it (the chat's preview, the plan's table, a running command). A
terminal that cuts lines instead of reflowing them (xterm) then loses as many rows of what was printed
above the region: blank rows, not a garbled table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.segment import Segment


def rows_after_reflow(widths: Sequence[int], columns: int) -> int:
    """The rows lines of these widths take on a screen `columns` wide that wraps them."""
    return sum(max(1, -(-width // max(1, columns))) for width in widths)


class ReflowingLive(Live):
    """A rich `Live` that redraws cleanly after the terminal got narrower (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._drawn: tuple[RenderableType, int] | None = None  # the last drawing and the width it had

    def refresh(self) -> None:  # every drawing, the last one of `stop` included, goes through here
        self._correct_height()
        super().refresh()
        self._drawn = (self._live_render.renderable, self.console.width)

    def _correct_height(self) -> None:
        """Tells rich how many rows its last drawing takes now that the terminal may have wrapped it."""
        shape = self._live_render._shape  # rich has no public way to say how tall the last drawing is now
        if self._drawn is None or shape is None:
            return
        renderable, width = self._drawn
        columns = self.console.width
        if columns >= width:
            return
        lines = self.console.render_lines(renderable, self.console.options.update_width(width), pad=False)
        widths = [Segment.get_line_length(line) for line in lines[: shape[1]]]
        self._live_render._shape = (shape[0], max(shape[1], rows_after_reflow(widths, columns)))


def transient_live(console: Console, renderable: RenderableType) -> Live:
    """A started live region that we redraw ourselves (no refresh thread) and that vanishes when
    stopped; cropped, since a region taller than the screen cannot be redrawn; redrawn cleanly after the
    terminal got narrower (`ReflowingLive`)."""
    live = ReflowingLive(
        renderable,
        console=console,
        auto_refresh=False,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
        vertical_overflow="crop",
    )
    live.start(refresh=True)
    return live
