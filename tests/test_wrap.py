"""Text laid out by terminal cells (paicli/common/wrap.py): wrapped at spaces, or cut to one row with `…`."""

from __future__ import annotations

import pytest

from paicli.common.wrap import cut, spans, width_of, wrap


@pytest.mark.parametrize(
    ("text", "width", "rows"),
    [
        ("Enter approve · Esc cancel", 20, ["Enter approve · Esc", "cancel"]),
        ("one two", 7, ["one two"]),  # exactly the width: one row
        ("  indented words here", 12, ["  indented", "words here"]),  # the indentation stays on the first row
        ("a  b   c", 20, ["a  b   c"]),  # spaces inside a row as written
        ("aaaaaaaaaaaaaaaaaaaaaaaa bb", 10, ["aaaaaaaaaa", "aaaaaaaaaa", "aaaa bb"]),  # a longer word folds
        ("one\n\ntwo", 10, ["one", "", "two"]),
        ("", 10, [""]),
        ("trailing   ", 8, ["trailing"]),
        ("漢字漢字 漢字", 5, ["漢字", "漢字", "漢字"]),  # wide characters count two cells
        ("Esc\u00a0cancel now", 12, ["Esc\u00a0cancel", "now"]),  # a no-break space glues
    ],
)
def test_wrap_breaks_only_at_spaces_and_folds_only_a_word_wider_than_a_row(
    text: str, width: int, rows: list[str]
) -> None:
    assert wrap(text, width) == rows
    assert all(width_of(row) <= width for row in rows)


def test_spans_index_the_line_itself() -> None:
    line = "approve execute_command · task task_4 · 1 line, 117 characters"
    rows = [line[start:end] for start, end in spans(line, 30)]
    assert rows == ["approve execute_command · task", "task_4 · 1 line, 117", "characters"]


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("short", 10, "short"),
        ("data from the file that goes on", 20, "data from the file…"),
        ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),  # no space to cut at
        ("a bcdefghijklmnopqrstuvwxyz", 10, "a bcdefgh…"),  # a space too early: cut between characters
        ("漢字漢字漢字", 7, "漢字漢…"),
    ],
)
def test_cut_keeps_one_row_and_prefers_a_space(text: str, width: int, shown: str) -> None:
    assert cut(text, width) == shown
    assert width_of(cut(text, width)) <= width
