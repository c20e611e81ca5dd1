"""Text laid out for a terminal by cells: wrapped at spaces, or cut to one row with `…`.

The terminal's own edge cuts a line between any two characters (`(ta` / `sk_3)`), so nothing paicli prints
is left to it: prose is wrapped here (or by rich, which does the same), and a line that must stay one row
is cut here, at a space when there is one near the end.

- `width_of(text)`: the cells `text` takes (an East Asian wide character two, a combining mark none).
- `wrap(text, width)`: every line of `text` on rows of at most `width` cells, broken at spaces (U+0020
  only: a no-break space glues two words, `Esc\u00a0cancel`), the spaces at a break dropped, a word wider
  than a row folded. Spaces inside a row are kept as written (aligned columns stay aligned).
- `spans(line, width)`: the same for one line, as `(start, end)` indexes into it, for callers that carry
  styles along (paicli/ui/prompt/fragments.py).
- `cut(text, width)`: one row of at most `width` cells; when too long, cut at the last space in its second
  half, else between characters, and `…` added.

Not for what is asked about or trusted: a command, a write set or a trust field is shown whole, every
character kept, by paicli/common/shown.py.
"""

from __future__ import annotations

import re
import unicodedata

ELLIPSIS = "…"
_RUNS = re.compile(r" +|[^ ]+")


def width_of(text: str) -> int:
    return sum(char_width(char) for char in text)


def char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def wrap(text: str, width: int) -> list[str]:
    """Every line of `text` on rows of at most `width` cells (see the module docstring)."""
    rows: list[str] = []
    for line in text.split("\n"):
        rows += [line[start:end] for start, end in spans(line, width)]
    return rows


def spans(line: str, width: int) -> list[tuple[int, int]]:
    """The rows of one line (no newline in it) as `(start, end)` indexes; an empty line is one empty row."""
    width = max(1, width)
    rows: list[tuple[int, int]] = []
    start = end = used = 0  # the row being filled: line[start:end], `used` cells
    pending = 0  # cells of the spaces after the row's last word, kept if another word joins it
    for run in _RUNS.finditer(line):
        text = run.group()
        if text[0] == " ":
            if end == start and not rows:  # indentation at the start of the line belongs to its first row
                end, used = run.end(), min(width, len(text))
            else:
                pending = len(text)
            continue
        cells = width_of(text)
        if end > start and used + pending + cells > width:  # the word starts the next row
            rows.append((start, end))
            start = end = run.start()
            used = pending = 0
        elif end > start:
            used += pending
        pending = 0
        if used + cells <= width:
            end, used = run.end(), used + cells
            continue
        start, used = _fold(line, run.start(), run.end(), width, rows, start, used)  # wider than a row
        end = run.end()
    if end > start or not rows:
        rows.append((start, end))
    return rows


def _fold(
    line: str, begin: int, stop: int, width: int, rows: list[tuple[int, int]], start: int, used: int
) -> tuple[int, int]:
    """A word wider than a row, cut between characters: the full rows are added to `rows`; returns where
    the last, partial row starts and how many cells it holds."""
    for index in range(begin, stop):
        size = char_width(line[index])
        if used + size > width and index > start:
            rows.append((start, index))
            start, used = index, 0
        used += size
    return start, used


def cut(text: str, width: int) -> str:
    """`text` on one row of at most `width` cells (see the module docstring)."""
    if width_of(text) <= width:
        return text
    room = max(0, width - 1)
    used = 0
    end = 0
    for index, char in enumerate(text):
        used += char_width(char)
        if used > room:
            break
        end = index + 1
    head = text[:end]
    space = head.rfind(" ")
    if space > 0 and width_of(head[:space]) > room // 2:
        head = head[:space]
    return head.rstrip() + ELLIPSIS
