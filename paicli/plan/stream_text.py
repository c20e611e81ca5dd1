"""The text of a streamed planner reply below the JSON (paicli/plan/stream_parse.py reads the JSON): the
`<think>` blocks taken out as the pieces arrive, and whether a line opens with a fence. Both are told
where a piece ends before they can decide, and say so (a held tag, WAIT) instead of guessing.
"""

from __future__ import annotations

import re

TAG = re.compile(r"</?think(?:ing)?>")
TAGS = ("<think>", "<thinking>", "</think>", "</thinking>")
NO, WAIT, FENCE = range(3)


def fence_at(text: str, position: int) -> tuple[int, int]:
    """Whether a line starting at `position` opens with a fence (up to three spaces, then ```): FENCE
    with the position after the backticks, NO, or WAIT when the text ends before that is known."""
    end = len(text)
    spaces = position
    while spaces < end and spaces - position < 3 and text[spaces] == " ":
        spaces += 1
    ticks = spaces
    while ticks < end and ticks - spaces < 3 and text[ticks] == "`":
        ticks += 1
    if ticks - spaces == 3:
        return FENCE, ticks
    return (WAIT, position) if ticks == end else (NO, position)


class ThinkFilter:
    """The reply without `<think>…</think>` (or `<thinking>`) blocks, as it streams. Yields the text to
    scan, and None where a closing tag came without an opening one. A tag cut across pieces is held."""

    def __init__(self) -> None:
        self._inside = False
        self._pending = ""

    def feed(self, text: str) -> list[str | None]:
        if not self._pending and not self._inside and "<" not in text:
            return [text]  # the usual piece: nothing to look at
        text, self._pending = self._pending + text, ""
        pieces: list[str | None] = []
        position = 0
        while (match := TAG.search(text, position)) is not None:
            closing = match.group().startswith("</")
            if not self._inside:
                pieces.append(text[position : match.start()])
                if closing:
                    pieces.append(None)
            self._inside = not closing
            position = match.end()
        cut = text.rfind("<", max(position, len(text) - len(max(TAGS, key=len)) + 1))
        if cut >= 0 and any(tag.startswith(text[cut:]) for tag in TAGS):
            self._pending = text[cut:]
        else:
            cut = len(text)
        if not self._inside and cut > position:
            pieces.append(text[position:cut])
        return pieces
