"""How many rows a drawing takes once a narrower terminal wrapped its lines."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from paicli.ui.chat.reflow import rows_after_reflow, transient_live


def test_rows_after_reflow() -> None:
    assert rows_after_reflow([100, 40, 0, 60], 60) == 2 + 1 + 1 + 1
    assert rows_after_reflow([], 60) == 0


def test_a_narrower_console_moves_up_over_every_wrapped_row() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system=None)
    drawing = Text("x" * 90 + "\n" + "y" * 30 + "\n" + "z" * 90)
    live = transient_live(console, drawing)
    console.width = 50
    start = len(out.getvalue())
    live.update(drawing, refresh=True)
    moved_up = out.getvalue()[start:].split("x")[0].count("\x1b[1A")
    assert moved_up == 2 + 1 + 2 - 1  # five rows now; the cursor is on the last
    start = len(out.getvalue())
    live.update(drawing, refresh=True)  # drawn at 50 columns (rich wrapped it to five rows): no correction
    assert out.getvalue()[start:].split("x")[0].count("\x1b[1A") == 5 - 1
    live.stop()
