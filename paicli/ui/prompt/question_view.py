"""What an approval question shows: the whole command, paged when it does not fit, never cut.

The command is drawn by `paicli.common.shown.rows`: each line on its own rows (numbered when there are
several, `⏎` at the end of each but the last, long lines wrapped with `↪`), with its size in the header
(`3 lines, 1,204 characters`). When it is longer than the rows the terminal leaves, the question shows one
page at a time (space or ↓ the next, b or ↑ the one before) and `y` and `a` answer only once the last page
has been on screen: a payload cannot wait below the fold for a yes given to the first page. `n` and Esc
always answer. The record printed once answered (`Pager` unused) holds every row.
"""

from __future__ import annotations

from dataclasses import dataclass

from prompt_toolkit.formatted_text import FormattedText

from paicli.common.sanitize import terminal_safe
from paicli.common.shown import inline, rows, size_note
from paicli.common.wrap import width_of
from paicli.tools.base import ApprovalRequest
from paicli.ui.prompt.fragments import NBSP, Fragments, boxed, key_hint

DEFAULT_COLUMNS = 100
BORDER: Fragments = [("ansiyellow", "│ ")]
END: Fragments = [("ansiyellow", "╰ ")]
MIN_PAGE = 3  # rows of the command shown however small the terminal


@dataclass
class Pager:
    """Which rows of a long command are on screen; whether the last of them has been."""

    top: int = 0
    page: int = 0  # rows of the command per page when it did not fit the last time it was drawn; 0: it did
    total: int = 0
    seen_all: bool = False
    hurried: bool = False  # y or a was pressed before the last page: the footer says why nothing happened

    def forward(self) -> None:
        if self.page:
            self.top = min(self.top + self.page, max(0, self.total - self.page))
            self.seen_all = self.seen_all or self.top + self.page >= self.total

    def back(self) -> None:
        self.top = max(0, self.top - self.page)


def question(
    request: ApprovalRequest,
    answer: str | None = None,
    waiting: int = 0,
    *,
    columns: int = DEFAULT_COLUMNS,
    screen_rows: int | None = None,
    pager: Pager | None = None,
) -> FormattedText:
    """The approval question as formatted fragments (never parsed as markup). `waiting`: questions queued
    behind it. With `screen_rows` and a `pager`, the command is paged to fit that many rows; else it is
    shown whole."""
    always = getattr(request, "always", "this exact call")
    opaque = getattr(request, "opaque", False)
    verb = "run outside the sandbox, with your full rights:" if getattr(request, "outside", False) else "approve"
    task = f"{NBSP}· task {terminal_safe(request.task_id)}" if request.task_id else ""
    size = f"{NBSP}· {size_note(request.summary)}" if "\n" in request.summary or len(request.summary) > columns else ""
    title: Fragments = [("bold ansiyellow", f"{verb} {terminal_safe(request.tool)}{task}{size}")]
    if waiting and answer is None:
        title.append(("ansiyellow", f"{NBSP}· {waiting} more waiting"))
    head = boxed(title, columns, first=[("bold ansiyellow", "╭ ")], rest=BORDER)
    notes: Fragments = []
    if request.reason:
        notes += boxed([("", f"why: {inline(request.reason)}")], columns, first=BORDER, rest=BORDER)
    if programs := getattr(request, "programs", ()):
        label = "starts at least" if opaque else "starts"
        notes += boxed([("", f"{label}: {inline(', '.join(programs))}")], columns, first=BORDER, rest=BORDER)
    if opaque:
        notes += boxed(
            [("ansired", "paicli cannot tell what this runs: read it closely")], columns, first=BORDER, rest=BORDER
        )
    command = rows(request.summary, max(8, columns - 2))
    shown, pager_line = command, ""
    if screen_rows is not None and pager is not None:
        fixed = _rows_of(head, columns) + _rows_of(notes, columns) + 1  # the footer
        shown, pager_line = _page(command, pager, screen_rows - fixed)
    body: Fragments = []
    for row in shown:
        body += [*BORDER, ("bold", f"{row}\n")]
    if pager_line:
        body += [*BORDER, ("ansicyan", pager_line + "\n")]
    footer = boxed(_footer(answer, always, pager), columns, first=BORDER, rest=BORDER, last=END)
    if answer is None:  # the question waits on its last row; the record printed once answered ends the line
        footer[-1] = ("", "")
    return FormattedText([*head, *body, *notes, *footer])


def _page(command: list[str], pager: Pager, room: int) -> tuple[list[str], str]:
    """The rows of the command on this page and the line that says where the page is ("" when it fits)."""
    pager.total = len(command)
    if len(command) <= room:
        pager.page, pager.top, pager.seen_all = 0, 0, True
        return command, ""
    pager.page = max(MIN_PAGE, room - 1)  # a row for the pager line
    pager.top = min(pager.top, max(0, pager.total - pager.page))
    end = min(pager.total, pager.top + pager.page)
    if end >= pager.total:
        pager.seen_all = True
    where = f"── rows {pager.top + 1}–{end} of {pager.total}"
    more = " · space/↓: next page" if end < pager.total else " · the end"
    back = " · b/↑: back" if pager.top else ""
    return command[pager.top : end], f"{where}{more}{back} ──"


def _footer(answer: str | None, always: str, pager: Pager | None) -> Fragments:
    if answer is not None:
        style = "ansigreen" if answer in ("yes", "always") else "ansired"
        return [(style, answer)]
    if pager is not None and not pager.seen_all:
        hurry = "ansired" if pager.hurried else ""
        return key_hint(
            [("space", "next page"), ("n", "no"), ("esc", "cancel"), ("y/a", "once you have seen the last page")],
            styles=["", "", "", hurry],
        )
    return key_hint(
        [("y", "yes"), ("n", "no"), ("a", f"always allow {terminal_safe(always)} this session"), ("esc", "cancel")]
    )


def _rows_of(fragments: Fragments, columns: int) -> int:
    """Screen rows the fragments take at `columns` wide (wrapped by the window)."""
    text = "".join(text for _, text in fragments)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return sum(max(1, -(-width_of(line) // max(1, columns))) for line in lines)
