"""prompt_toolkit text wrapped at spaces with its styles, in a box whose border holds (ui/prompt/fragments.py)."""

from __future__ import annotations

from paicli.common.wrap import width_of
from paicli.ui.prompt.fragments import boxed, fragment_rows, key_hint, wrapped


def plain(fragments: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in fragments)


def test_styles_follow_their_words_across_rows() -> None:
    rows = fragment_rows([("bold", "approve "), ("", "execute_command now"), ("red", " stop")], 16)
    assert rows == [[("bold", "approve")], [("", "execute_command")], [("", "now"), ("red", " stop")]]


def test_a_key_hint_breaks_between_keys_and_shows_plain_spaces() -> None:
    hint = key_hint([("Enter", "approve"), ("i", "add to the plan"), ("Esc", "cancel")])
    shown = plain(wrapped(hint, 24))
    assert shown == "Enter approve · i add to\nthe plan · Esc cancel"
    assert "\u00a0" not in shown


def test_a_box_keeps_its_border_on_every_row() -> None:
    why = [("", "why: a write was refused: only this task's declared files (stale.txt) are writable")]
    rows = plain(boxed(why, 30, first=[("", "│ ")], rest=[("", "│ ")], last=[("", "╰ ")])).splitlines()
    assert all(row.startswith("│ ") for row in rows[:-1]) and rows[-1].startswith("╰ ")
    assert all(width_of(row) <= 30 for row in rows)
    assert " ".join(row[2:] for row in rows) == why[0][1]  # every word, whole
