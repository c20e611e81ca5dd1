"""What a search found: the matching lines of each file (`FileHits`), whichever engine ran, and rg's
`--heading --null --line-number` output read into them (`RgOutput`).

rg is always given paths that start with `./`, so its output has two kinds of line: a record starts with
its line number (`number:text`), a note starts with `./`. A file's records come together as a group: the
first one after the path and a NUL (`./path NUL number:text`), the others alone, groups separated by an
empty line (no record is empty). A note says that a file is binary (`./path: binary file matches (...)`)
and follows that file's records if it had any: that file is dropped. rg prints the note of a file without
records with no empty line before it, at the end of the group before. Reading a group, not a record, at a
time in Python is what makes a search of tens of thousands of matching lines cheap: a file's records are
counted by one `count` and only the first few are kept (their text decoded when shown). A path must hold
no line break (those are searched in process)."""

from __future__ import annotations

import os
from collections.abc import Sequence

RG_BINARY = b": binary file matches ("
NOTE = b"\n./"  # the start of a note inside a group: no record starts with "./"


class FileHits:
    """The matching lines of one file: how many (`count`) and the first few kept (`lines`: line number and
    text). rg's records are decoded on first use: a broad search shows the lines of a few files only."""

    __slots__ = ("_lines", "_records", "count", "path")

    def __init__(
        self, path: str, count: int, lines: list[tuple[int, str]] | None = None, records: Sequence[bytes] = ()
    ) -> None:
        self.path = path  # relative to the workspace
        self.count = count
        self._lines = lines
        self._records = records  # rg's `number:text` records of the kept lines, when `lines` is None

    @property
    def lines(self) -> list[tuple[int, str]]:
        if self._lines is None:
            self._lines = [_line(record) for record in self._records]
        return self._lines

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileHits):
            return NotImplemented
        return (self.path, self.count, self.lines) == (other.path, other.count, other.lines)

    __hash__ = None  # type: ignore[assignment]  # mutable (decoded on first use), compared by value

    def __repr__(self) -> str:
        return f"FileHits({self.path!r}, {self.count}, {self.lines!r})"


def _line(record: bytes) -> tuple[int, str]:
    number, _, text = record.partition(b":")
    return int(number), text.decode("utf-8", "replace")


def parse_rg_output(outputs: Sequence[bytes], keep: int) -> dict[str, FileHits] | None:
    """rg's output: the files with a matching line (those rg calls binary left out), each with its matching
    lines counted and the first `keep` kept; None when the output is not in the form this reads."""
    parsed = RgOutput(keep)
    for output in outputs:
        parsed.feed(output)
        parsed.end()
    return parsed.hits() if parsed.understood else None


class RgOutput:
    """rg's output read as it comes (`feed` each piece, `end` at the end of each process's output, then
    `hits`): parsing overlaps rg's run instead of following it, a piece at a time (a few milliseconds each,
    so the event loop is never held long)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._found: dict[bytes, tuple[int, list[bytes]]] = {}  # name: count, first records
        self._pending: list[bytes] = []  # the start of a group whose end has not come yet
        self._new: list[bytes] = []  # names first seen since `take_new`
        self.understood = True  # false once a group was not in the form above (another rg's output)

    def feed(self, piece: bytes) -> None:
        cut = piece.rfind(b"\n\n")
        if cut < 0:  # an empty line cut in two is found once the pieces are joined
            self._pending.append(piece)
            return
        whole = b"".join([*self._pending, piece[:cut]]) if self._pending else piece[:cut]
        rest = piece[cut + 2 :]
        self._pending = [rest] if rest else []
        for group in whole.split(b"\n\n"):
            self._group(group)

    def end(self) -> None:
        if self._pending:
            whole = b"".join(self._pending)
            self._pending = []
            for group in whole.removesuffix(b"\n").split(b"\n\n"):
                self._group(group)

    def _group(self, group: bytes) -> None:
        name, nul, records = group.partition(b"\0")
        if not nul:
            return  # notes only: files without a kept record
        name = name.rpartition(b"\n")[2]  # notes before the path (not rg's order, but harmless)
        if not records[:1].isdigit():  # a record is `number:text`: this rg writes something else
            self.understood = False
            return
        at = records.find(NOTE)
        if at >= 0:
            notes, records = records[at + 1 :].split(b"\n"), records[:at]
            if not all(RG_BINARY in note for note in notes):  # more paths: another form of output
                self.understood = False
                return
            if any(note.rpartition(RG_BINARY)[0] == name for note in notes):
                return  # binary: rg printed its records before it saw a NUL byte
        count = records.count(b"\n") + 1
        kept = records.split(b"\n", self.keep)[: self.keep]
        known = self._found.get(name)
        if known is None:
            self._found[name] = (count, kept)
            self._new.append(name)
        else:  # not rg's way (a file's records come together), but counted right all the same
            self._found[name] = (known[0] + count, [*known[1], *kept][: self.keep])

    def take_new(self) -> list[str]:
        """The paths of the files first named since the last call (relative to the workspace)."""
        new, self._new = self._new, []
        return [_path(name) for name in new]

    def hits(self) -> dict[str, FileHits]:
        found: dict[str, FileHits] = {}
        for name, (count, kept) in self._found.items():
            path = _path(name)
            found[path] = FileHits(path, count, records=kept)
        return found


def _path(name: bytes) -> str:
    path = os.fsdecode(name)
    return path[2:] if path.startswith("./") else path
