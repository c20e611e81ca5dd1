"""A line that must stay one row (a tool call, a result's headline, a line of output, a task in the live
table), cut to the width it is drawn at: at a space with `…` when one is near the end
(paicli/common/wrap.py), never wrapped by the terminal.

rich's own `no_wrap` + `overflow="ellipsis"` cuts in the middle of a word, and `console.print(text)` drops
both (rich joins the printed Texts into a new one): `OneRow(text)` is cut when rendered, whoever prints it.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from paicli.common.wrap import ELLIPSIS, cut, width_of


class OneRow:
    def __init__(self, text: Text | str, style: str = "") -> None:
        self.text = text if isinstance(text, Text) else Text(text, style=style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield cut_text(self.text, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, width_of(self.text.plain))

    @property
    def plain(self) -> str:
        return self.text.plain


def cut_text(text: Text, width: int) -> Text:
    """`text` (its styles kept) on one row of at most `width` cells."""
    plain = text.plain.replace("\n", " ")
    shown = cut(plain, width)
    row = text.copy() if shown == plain else text[: len(shown) - len(ELLIPSIS)]
    if shown != plain:
        row.append(ELLIPSIS)
    row.plain = row.plain.replace("\n", " ")
    row.no_wrap, row.overflow, row.end = True, "crop", "\n"
    return row
