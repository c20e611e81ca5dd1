"""A tool result in a few lines: what the REPL shows under a call instead of the whole output.

`result_preview` reads the output as its tool wrote it: a command's first and last lines and its exit code
when not 0; grep's matches; which lines read_file returned (of how many); the entries listed; a
write's own sentence (its diff is shown by ui/chat/diff_view.py); anything else, its first and last lines. An
error shows its first line as the headline and what follows it. Pure: no terminal, no rich.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from paicli.common.sanitize import terminal_safe

HEAD_LINES = 4
TAIL_LINES = 2
LINE_CHARS = 300  # of one shown line; the terminal cuts it again at its edge
_EXIT = re.compile(r"\n?exit code (\d+)( \(killed by [^)]*\))?\Z")
_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
_READ_TOTAL = re.compile(r"^\.\.\. (?:file has (\d+) lines|output capped; showing lines \d+-\d+ of (\d+));")


@dataclass(frozen=True)
class Preview:
    headline: str  # `exit code 2 · 5 lines`, `3 matches`, `lines 1–40`, `no output`
    head: list[str] = field(default_factory=list)  # the first lines of the output, shown under the headline
    hidden: int = 0  # lines between head and tail that are not shown
    tail: list[str] = field(default_factory=list)  # the last lines, after the hidden ones
    failed: bool = False


def result_preview(name: str, ok: bool, output: str, *, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> Preview:
    text = terminal_safe(output).replace("\r\n", "\n")
    if not ok:
        first, _, rest = text.strip("\n").partition("\n")
        headline = first.strip() or "failed"
        headline = headline if headline.lower().startswith("error") else f"Error: {headline}"
        return _shown(headline, rest, head, tail, failed=True)
    if name == "execute_command":
        return _command(text, head, tail)
    lines = _lines(text)
    if not lines:
        return Preview("no output")
    if name == "read_file":
        numbers = [int(match.group(1)) for line in lines if (match := _NUMBERED.match(line))]
        if numbers:  # which lines were read is what matters: the user has the file
            span = f"line {numbers[0]}" if len(numbers) == 1 else f"lines {numbers[0]}–{numbers[-1]}"
            total = _READ_TOTAL.search(lines[-1])
            return Preview(f"{span} of {int(total.group(1) or total.group(2)):,}" if total else span)
    if name == "grep_code":
        if len(lines) == 1 and lines[0].startswith("no matches"):
            return Preview(lines[0])
        count = sum(1 for line in lines if re.match(r"[^:\n]+:\d+:", line))
        return _cut(f"{count} match" + ("" if count == 1 else "es"), lines, head, tail)
    if name in ("list_dir", "glob_files"):
        return _cut(_count(len(lines), "entry", "entries"), lines, head, tail)
    if name in ("write_file", "edit_file") and len(lines) == 1:
        return Preview(lines[0])
    return _cut(_count(len(lines), "line", "lines"), lines, head, tail)


def _command(text: str, head: int, tail: int) -> Preview:
    match = _EXIT.search(text)
    body = text[: match.start()] if match else text
    code = int(match.group(1)) if match else 0
    status = f"exit code {code}{match.group(2) or ''}" if match and code else ""
    lines = [] if body.strip() == "(no output)" else _lines(body)
    counted = _count(len(lines), "line", "lines") if lines else "no output"
    return _cut(f"{status} · {counted}" if status else counted, lines, head, tail, failed=bool(code))


def _shown(headline: str, rest: str, head: int, tail: int, *, failed: bool) -> Preview:
    return _cut(headline, _lines(rest), head, tail, failed=failed)


def _cut(headline: str, lines: list[str], head: int, tail: int, *, failed: bool = False) -> Preview:
    lines = [line[:LINE_CHARS] for line in lines]
    if len(lines) <= head + tail + 1:
        return Preview(headline, lines, failed=failed)
    return Preview(headline, lines[:head], len(lines) - head - tail, lines[len(lines) - tail :], failed)


def _lines(text: str) -> list[str]:
    lines = text.strip("\n").split("\n")
    return [] if lines == [""] else lines


def _count(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"
