"""prompt_toolkit text (style, text) fragments laid out in rows: wrapped at spaces by terminal cells, styles
kept (paicli/common/wrap.py), so a question or a key hint never breaks a word at the terminal's edge and a
box keeps its border on every row."""

from __future__ import annotations

from collections.abc import Sequence

from paicli.common.wrap import spans, width_of

Fragments = list[tuple[str, str]]
NBSP = "\u00a0"  # breaks no row: a key stays with what it does, a `·` with what it follows


def fragment_rows(fragments: Sequence[tuple[str, str]], width: int) -> list[Fragments]:
    """The fragments on rows of at most `width` cells, one list of fragments per row (a newline in the text
    starts a new row; the newline itself is not kept). A no-break space keeps the words on either side on
    one row, and is drawn as a plain space."""
    text = "".join(part for _, part in fragments)
    styles = [style for style, part in fragments for _ in part]
    rows: list[Fragments] = []
    offset = 0
    for line in text.split("\n"):
        for start, end in spans(line, width):
            rows.append(_styled(text, styles, offset + start, offset + end))
        offset += len(line) + 1
    return rows


def _styled(text: str, styles: list[str], start: int, end: int) -> Fragments:
    row: Fragments = []
    for index in range(start, end):
        char = " " if text[index] == NBSP else text[index]  # it kept two words together: drawn as a space
        if row and row[-1][0] == styles[index]:
            row[-1] = (styles[index], row[-1][1] + char)
        else:
            row.append((styles[index], char))
    return row


def boxed(
    fragments: Sequence[tuple[str, str]],
    width: int,
    *,
    first: Fragments,
    rest: Fragments,
    last: Fragments | None = None,
) -> Fragments:
    """The fragments wrapped to fit `width` after a prefix on each row: `first` on the first row, `rest` on
    the others; `last`, when given, on the last row (the only one included). Every row ends with a newline."""
    room = width - max(width_of("".join(part for _, part in prefix)) for prefix in (first, rest, last or rest))
    rows = fragment_rows(fragments, max(8, room))
    shown: Fragments = []
    for number, row in enumerate(rows):
        prefix = first if number == 0 else rest
        if last is not None and number == len(rows) - 1:
            prefix = last
        shown += [*prefix, *row, ("", "\n")]
    return shown


def key_hint(
    keys: Sequence[tuple[str, str]], *, key_style: str = "bold", separator_style: str = "", styles: Sequence[str] = ()
) -> Fragments:
    """`y yes · n no · esc cancel` as fragments: each key in `key_style`, glued to the first word of what it
    does, and each `·` to what comes before it, so a wrapped hint breaks between keys. `styles`: the style of
    each key's text (default plain)."""
    shown: Fragments = []
    for number, (key, does) in enumerate(keys):
        if number:
            shown.append((separator_style, NBSP + "· "))
        shown.append((key_style, key))
        shown.append((styles[number] if number < len(styles) else "", NBSP + does if does else ""))
    return [fragment for fragment in shown if fragment[1]]


def wrapped(fragments: Sequence[tuple[str, str]], width: int) -> Fragments:
    """The fragments wrapped at spaces to `width` cells, rows joined by newlines (no newline at the end)."""
    shown: Fragments = []
    for number, row in enumerate(fragment_rows(fragments, width)):
        shown += [("", "\n")] if number else []
        shown += row
    return shown
