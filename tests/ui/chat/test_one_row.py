"""A line that must stay one row, cut at a space with `…` however it is printed (ui/chat/one_row.py)."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.text import Text

from paicli.ui.chat.one_row import OneRow


def printed(*renderables: object, width: int = 30) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False).print(*renderables)
    return out.getvalue().splitlines()


def test_a_long_line_is_cut_at_a_space_even_when_printed_alone() -> None:
    # console.print(text) would drop a Text's own no_wrap: the terminal would then cut the words
    line = Text.assemble(("⏺ ", "cyan"), "execute_command cat a rather long file name here")
    assert printed(OneRow(line)) == ["⏺ execute_command cat a…"]


def test_rows_in_a_group_are_cut_each_to_the_width() -> None:
    rows = printed(Group(OneRow("short"), OneRow("word " * 20), OneRow("x" * 50)))
    assert rows == ["short", "word word word word word…", "x" * 29 + "…"]


def test_a_line_break_in_the_text_never_makes_a_second_row() -> None:
    assert printed(OneRow("one\ntwo")) == ["one two"]
