"""A write's diff under its tool line: counts, coloured lines, capped."""

from __future__ import annotations

from paicli.tools.diff import file_diff
from paicli.ui.chat.diff_view import counts_text, diff_counts, inline_diff


def test_counts_leave_the_file_headers_out() -> None:
    diff = file_diff("a.py", "x\ny\n", "x\nz\nw\n")
    assert diff_counts(diff) == (2, 1)
    assert counts_text(diff).plain == "+2 −1"


def test_the_inline_diff_drops_the_headers_colours_lines_and_is_capped() -> None:
    diff = file_diff("a.py", None, "".join(f"{n}\n" for n in range(40)))
    text = inline_diff(diff, limit=5, expand_hint=" · Ctrl+O shows all")
    lines = text.plain.splitlines()
    assert lines == [
        "    @@ -0,0 +1,40 @@",
        "    +0",
        "    +1",
        "    +2",
        "    +3",
        "    … 36 more diff lines · Ctrl+O shows all",
    ]
    assert any(span.style == "green" for span in text.spans)


def test_escape_sequences_in_a_diff_are_shown_not_run() -> None:
    assert "\x1b" not in inline_diff(file_diff("a", "", "\x1b[2J\n")).plain
