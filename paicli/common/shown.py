"""The one way untrusted text is shown in full: commands to approve, write sets, trust fields. Never cut.

`terminal_safe` (sanitize.py) makes text harmless to a terminal; this module also makes it *readable as
what it is*, so a payload cannot hide in plain sight:

- `inline(text)`: one line. A newline is shown as `⏎`, a tab as `⇥`, a run of `LONG_RUN` or more spaces
  as `⟨N spaces⟩` (thousands of spaces no longer push what follows out of view), a space other than
  U+0020 (no-break, em, ideographic: bash reads them as part of a word) as `\\u00a0`, and every control
  or format character as `\\x1b`, `\\u202e` (terminal_safe). The marks themselves (`⏎ ⇥ ⟨ ⟩ ↪`), when the
  text holds them, are shown escaped too (`\\u23ce`), so every mark on screen is paicli's.
- `rows(text, width)`: every line of the text, each made visible as by `inline`, on rows of at most
  `width` columns. A text of more than one line gets its line numbers in a gutter, each line but the last
  ends with `⏎`, and a line too long for the width continues on rows marked `↪` in the gutter: a new
  line of the command can never pass for the continuation of the one before, nor the reverse. Asked to,
  it shows a run of blank lines as one row saying how many (trust questions, printed whole).
- `headline(text)`: `inline` for a one-row summary (a transcript's tool call, a live view's row); the only
  form that shortens, and it says so with the whole size (`… (3 lines, 1,204 characters)`). What is
  asked about is never shown this way.
- `size_note(text)` (`3 lines, 1,204 characters`) and `too_long_to_ask(text)`: a command larger than
  `MAX_ASKED_CHARS` or longer than `MAX_ASKED_LINES` lines is refused rather than asked about (no one
  reads it closely; the model is told to write a script file and run that).

Widths are counted in terminal columns (East Asian wide characters take two).
"""

from __future__ import annotations

import re

from paicli.common.sanitize import terminal_safe
from paicli.common.wrap import char_width, width_of

LONG_RUN = 16  # spaces in a row shown as one mark with their number
MAX_ASKED_CHARS = 20_000  # a command (or other call) larger than this is refused, never asked about
MAX_ASKED_LINES = 500
BLANK_RUN = 3  # blank lines in a row that `rows(..., blank_runs=True)` shows as one
NEWLINE, TAB, CONTINUED = "⏎", "⇥", "↪"
_MARKS = "⏎⇥⟨⟩↪"
_SPECIAL = re.compile(f" {{{LONG_RUN},}}|\t|[{_MARKS}]|[^\\S\n\t ]")


def _mark(match: re.Match[str]) -> str:
    found = match.group()
    if found.startswith(" "):
        return f"⟨{len(found)} spaces⟩"
    if found == "\t":
        return TAB
    return f"\\u{ord(found):04x}"  # one of our marks, or a space that is not U+0020


def inline(text: str) -> str:
    """`text` on one line, every character visible or marked: see the module docstring."""
    return f" {NEWLINE} ".join(_visible(line) for line in text.split("\n"))


def _visible(line: str) -> str:
    return _SPECIAL.sub(_mark, terminal_safe(line))  # a lone \r (also before a newline) shows as \x0d


def rows(text: str, width: int, *, blank_runs: bool = False) -> list[str]:
    """Every line of `text`, made visible, on rows of at most `width` columns: see the module docstring.
    With `blank_runs`, BLANK_RUN or more lines in a row holding nothing but spaces and tabs take one row
    (`⟨59 blank lines⟩ ⏎`, or `⟨61 blank lines: 3,000 spaces⟩`; the next row's number shows where the
    text goes on): a value that is only
    there to push the rest off the screen cannot."""
    lines = text.split("\n")
    if len(lines) == 1:
        return _wrap(_visible(text), max(8, width)) or [""]
    digits = len(str(len(lines)))
    room = max(8, width - digits - 1)
    shown: list[str] = []
    number = 0
    while number < len(lines):
        run = _blank_run(lines, number) if blank_runs else 1
        if run >= BLANK_RUN:
            visible = _blank_note(lines[number : number + run])
        else:
            run, visible = 1, _visible(lines[number])
        number += run
        if number < len(lines):
            visible += f" {NEWLINE}" if visible else NEWLINE
        chunks = _wrap(visible, room) or [""]
        shown.append(f"{number - run + 1:>{digits}} {chunks[0]}")
        shown += [f"{CONTINUED:>{digits}} {chunk}" for chunk in chunks[1:]]
    return shown


def _blank_note(lines: list[str]) -> str:
    """`⟨61 blank lines⟩`, with the spaces and tabs they hold counted: `⟨61 blank lines: 3,000 spaces⟩`."""
    spaces, tabs = sum(line.count(" ") for line in lines), sum(line.count("\t") for line in lines)
    held = [f"{n:,} {name}{'s' if n != 1 else ''}" for n, name in ((spaces, "space"), (tabs, "tab")) if n]
    return f"⟨{len(lines)} blank lines{': ' + ', '.join(held) if held else ''}⟩"


def _blank_run(lines: list[str], start: int) -> int:
    """How many lines from `start` on hold nothing but spaces and tabs."""
    end = start
    while end < len(lines) and not lines[end].strip(" \t"):
        end += 1
    return end - start


def headline(text: str, limit: int = 160) -> str:
    """`text` as one row of at most about `limit` columns: see the module docstring."""
    shown = inline(text)
    if width_of(shown) <= limit:
        return shown
    note = f"… ({size_note(text)})"
    return "".join(_wrap(shown, max(8, limit - width_of(note)))[:1]) + note


def line_count(text: str) -> int:
    return text.count("\n") + 1


def size_note(text: str) -> str:
    lines = line_count(text)
    return f"{lines:,} line{'s' if lines != 1 else ''}, {len(text):,} character{'s' if len(text) != 1 else ''}"


def too_long_to_ask(text: str) -> str | None:
    """Why `text` is too large to ask the user about (None: it is not)."""
    if len(text) <= MAX_ASKED_CHARS and line_count(text) <= MAX_ASKED_LINES:
        return None
    return (
        f"it is {size_note(text)}; paicli asks about at most {MAX_ASKED_CHARS:,} characters and "
        f"{MAX_ASKED_LINES} lines, so that the user can read all of it. Write the script to a file in the "
        "workspace (write_file) and run that file, or split the work into shorter commands"
    )


def _wrap(text: str, width: int) -> list[str]:
    """`text` cut into pieces of at most `width` columns, every character kept."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for char in text:
        size = char_width(char)
        if used + size > width and current:
            pieces.append("".join(current))
            current, used = [], 0
        current.append(char)
        used += size
    if current:
        pieces.append("".join(current))
    return pieces
