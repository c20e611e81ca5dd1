"""A running call's state: the last lines of its output as they come, progress bars as their last frame."""

from __future__ import annotations

import io

from rich.console import Console

from paicli.ui.chat.command_live import SHOWN_OUTPUT_LINES, RunningCall


def shown(call: RunningCall, status: str = "") -> list[str]:
    out = io.StringIO()
    Console(file=out, width=60, color_system=None).print(call.renderable("2.5s", status))
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_the_last_lines_show_under_the_timer_with_the_toolbar_below() -> None:
    call = RunningCall("execute_command", 0.0)
    call.add_output("".join(f"line {n}\n" for n in range(10)))
    call.add_output("half a li")
    call.add_output("ne\nand a partial")
    assert call.last_lines() == ["line 7", "line 8", "line 9", "half a line", "and a partial"]
    assert len(call.last_lines()) == SHOWN_OUTPUT_LINES
    assert shown(call, "gpt-4o · /help") == [
        "  ⎿ running 2.5s · Esc cancels",
        "    line 7",
        "    line 8",
        "    line 9",
        "    half a line",
        "    and a partial",
        " gpt-4o · /help",
    ]


def test_a_progress_bar_shows_its_last_frame_and_escapes_are_made_visible() -> None:
    call = RunningCall("execute_command", 0.0)
    call.add_output("10%\r50%\r100%\n\x1b[31mred\n")
    assert call.last_lines() == ["100%", "\\x1b[31mred"]
