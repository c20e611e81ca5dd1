"""What a search found: the matching lines of each file (`FileHits`), whichever engine ran, and rg's
`--null --line-number` output read into them (`RgOutput`): a record is `path NUL number:text`, a file's
records come together, and rg's note that a file with a match is binary ("path: binary file matches
(...)") drops that file. A path must hold no line break (those are searched in process)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

RG_BINARY = b": binary file matches ("


@dataclass(frozen=True)
class FileHits:
    path: str  # relative to the workspace
    count: int  # matching lines
    lines: list[tuple[int, str]]  # (line number, text) of the first matching lines kept


def parse_rg_output(outputs: Sequence[bytes], keep: int) -> dict[str, FileHits]:
    """rg's `--null --line-number` output: the files with a matching line (those rg calls binary left out),
    each with its matching lines counted and the first `keep` kept. A path must hold no line break."""
    parsed = RgOutput(keep)
    for output in outputs:
        parsed.feed(output)
        parsed.end()
    return parsed.hits()


class RgOutput:
    """rg's output read as it comes (`feed` each piece, `end` at the end of each process's output, then
    `hits`): parsing overlaps rg's run instead of following it, a piece at a time (a few milliseconds each,
    so the event loop is never held long)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._counts: dict[bytes, int] = {}
        self._lines: dict[bytes, list[bytes]] = {}
        self._binary: set[bytes] = set()
        self._pending: list[bytes] = []  # the start of a record whose line break has not come yet
        self._new: list[bytes] = []  # names first seen since `take_new`

    def feed(self, piece: bytes) -> None:
        cut = piece.rfind(b"\n")
        if cut < 0:
            self._pending.append(piece)
            return
        whole = b"".join([*self._pending, piece[: cut + 1]]) if self._pending else piece[: cut + 1]
        self._pending = [piece[cut + 1 :]] if cut + 1 < len(piece) else []
        self._records(whole)

    def end(self) -> None:
        if self._pending:
            self._records(b"".join(self._pending))
            self._pending = []

    def _records(self, data: bytes) -> None:
        counts, lines, keep = self._counts, self._lines, self.keep
        for record in data.split(b"\n"):
            name, nul, rest = record.partition(b"\0")
            if not nul:
                if RG_BINARY in record:
                    self._binary.add(record.rpartition(RG_BINARY)[0])
                continue
            kept = lines.get(name)
            if kept is None:
                lines[name] = [rest]
                counts[name] = 1
                self._new.append(name)
            else:
                counts[name] += 1
                if len(kept) < keep:
                    kept.append(rest)

    def take_new(self) -> list[str]:
        """The paths of the files first named since the last call (relative to the workspace)."""
        new, self._new = self._new, []
        return [_path(name) for name in new]

    def hits(self) -> dict[str, FileHits]:
        found: dict[str, FileHits] = {}
        for name, kept in self._lines.items():
            if name in self._binary:
                continue
            path = _path(name)
            pairs = [
                (int(number), text.decode("utf-8", "replace")) for number, _, text in (r.partition(b":") for r in kept)
            ]
            found[path] = FileHits(path, self._counts[name], pairs)
        return found


def _path(name: bytes) -> str:
    path = os.fsdecode(name)
    return path[2:] if path.startswith("./") else path
