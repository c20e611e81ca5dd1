"""paicli/common/shown.py: untrusted text shown whole, every line and every hidden character visible."""

from __future__ import annotations

import pytest

from paicli.common.shown import (
    MAX_ASKED_CHARS,
    MAX_ASKED_LINES,
    headline,
    inline,
    rows,
    size_note,
    too_long_to_ask,
    width_of,
)

PAYLOAD = "# run the unit tests" + " ." * 1500 + "\n" * 40 + "touch /tmp/p"  # finding 4 of issue 31


def body(row: str, digits: int) -> str:
    return row[digits + 1 :]


def test_the_issue_payload_is_shown_whole_with_its_line_number() -> None:
    shown = rows(PAYLOAD, 80)
    assert all(width_of(row) <= 80 for row in shown)
    assert shown[-1] == "41 touch /tmp/p"  # its own line, numbered: not part of the comment
    assert shown[0].startswith(" 1 # run the unit tests")
    continued = [row for row in shown if row.startswith(" ↪ ")]
    assert len(continued) == -(-len(PAYLOAD.split("\n")[0] + " ⏎") // 77) - 1  # every dot kept, wrapped
    assert "".join(body(row, 2) for row in shown[: len(continued) + 1]) == PAYLOAD.split("\n")[0] + " ⏎"
    assert [row for row in shown if row.startswith(" 2")] == [" 2 ⏎"]
    assert size_note(PAYLOAD) == "41 lines, 3,072 characters"


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("# comment\ntouch /tmp/p", "# comment ⏎ touch /tmp/p"),  # the header used to fold this to a space
        ("# comment\r\ntouch p", "# comment\\x0d ⏎ touch p"),  # bash keeps the \r: so do we
        ("ls\rrm -rf x", "ls\\x0drm -rf x"),  # a lone \r would let `rm` overwrite `ls` on screen
        ("a\vb\fc", "a\\x0bb\\x0cc"),
        ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\x85d"),  # line breaks other than \n
        ("rm\u00a0-rf\u3000x\u2003y", "rm\\u00a0-rf\\u3000x\\u2003y"),  # spaces bash reads as letters
        ("echo" + " " * 3000 + "; rm x", "echo⟨3000 spaces⟩; rm x"),  # a run that would push `rm` away
        ("echo" + " " * 15 + "x", "echo" + " " * 15 + "x"),  # shorter runs (indentation) stay spaces
        ("a\tb", "a⇥b"),
        ("fake ⏎ mark ↪ and ⟨9 spaces⟩", "fake \\u23ce mark \\u21aa and \\u27e89 spaces\\u27e9"),
        ("\x1b]52;c;Zm9v\x07ok\u202e", "\\x1b]52;c;Zm9v\\x07ok\\u202e"),
        ("\u200bzero\u2066width", "\\u200bzero\\u2066width"),
    ],
)
def test_inline_makes_every_hidden_character_visible(text: str, seen: str) -> None:
    assert inline(text) == seen


def test_a_real_line_break_cannot_pass_for_a_wrapped_row_nor_the_reverse() -> None:
    """The marks are paicli's alone: a line of the text that starts with `↪ ` still has its number."""
    text = "# " + "a" * 40 + "\n↪ touch p"
    shown = rows(text, 30)
    assert shown[-1] == "2 \\u21aa touch p"
    assert all(row[0] in "12↪" for row in shown)
    one = rows("x" * 100, 30)  # one line: no gutter, nothing dropped
    assert "".join(one) == "x" * 100 and all(len(row) <= 30 for row in one)


def test_wide_characters_wrap_by_columns() -> None:
    shown = rows("漢" * 50, 21)
    assert all(width_of(row) <= 21 for row in shown) and "".join(shown) == "漢" * 50


def test_headline_says_what_it_left_out() -> None:
    assert headline("pytest -q\n--lf") == "pytest -q ⏎ --lf"
    long = headline("echo " + "x" * 1000 + "\nrm -rf build")
    assert long.endswith("… (2 lines, 1,018 characters)") and width_of(long) <= 160


def test_too_long_to_ask() -> None:
    assert too_long_to_ask("x" * MAX_ASKED_CHARS) is None
    assert too_long_to_ask("x\n" * (MAX_ASKED_LINES - 1)) is None
    reason = too_long_to_ask("x" * (MAX_ASKED_CHARS + 1))
    assert reason is not None and "20,001 characters" in reason and "write_file" in reason
    assert too_long_to_ask("\n" * MAX_ASKED_LINES) is not None  # many lines, few characters


@pytest.mark.parametrize(
    ("blanks", "note"),
    [
        ("\n" * 60, "⟨59 blank lines⟩"),
        (" \n" * 60, "⟨60 blank lines: 60 spaces⟩"),  # lines of one space each do not escape it
        ("\t \n" * 40 + "\n" * 20, "⟨60 blank lines: 40 spaces, 40 tabs⟩"),
    ],
)
def test_a_run_of_blank_lines_takes_one_row_when_asked(blanks: str, note: str) -> None:
    text = "python3 -m server" + ("\n" if not blanks.startswith("\n") else "") + blanks + "LD_PRELOAD=./x.so"
    shown = rows(text, 60, blank_runs=True)
    assert len(shown) <= 3 and any(note in row for row in shown), shown
    assert shown[-1].endswith("LD_PRELOAD=./x.so") and shown[-1].split()[0] == str(text.count("\n") + 1)
    assert len(rows(text, 60)) == text.count("\n") + 1  # by default every line is a row


def test_two_blank_lines_stay_as_they_are() -> None:
    assert rows("a\n\n\nb", 40, blank_runs=True) == ["1 a ⏎", "2 ⏎", "3 ⏎", "4 b"]
