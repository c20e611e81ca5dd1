"""The prompt's history, one per workspace: Up/Down and Ctrl-R go through what was typed in this project.

The file is ~/.paicli/history/<name>-<hash>, the name being the workspace folder's (for a person looking)
and the hash of its resolved path telling two folders of the same name apart. Without a writable home
the history lives in memory for the session.

The history is capped (issue 16: memory bounded): a session loads only the newest MAX_ENTRIES entries,
and at most MAX_CHARS of their text (an entry longer than that alone, a huge paste, is skipped rather than
ending the history there); once the file holds twice that, it is cut to what is loaded. The cut rewrites
the file (a new file renamed over it); a line another REPL of this workspace appends at that moment may be
lost, once in thousands of entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from paicli.common.atomic_write import write_path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ENTRIES = 10_000
MAX_CHARS = 2_000_000  # of the entries' text: a few pasted files must not crowd out the rest


def history_path(home: Path, workspace: Path) -> Path:
    resolved = os.path.realpath(workspace)
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:12]
    name = _UNSAFE.sub("_", Path(resolved).name)[:40] or "root"
    return home / ".paicli" / "history" / f"{name}-{digest}"


def history_file(home: Path, workspace: Path) -> History:
    path = history_path(home, workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return CappedFileHistory(str(path))
    except OSError:
        return InMemoryHistory()


@dataclass(frozen=True)
class _Entry:
    start: int  # offset in the file of its header (the lines before its text)
    end: int  # offset after its last line
    text: str


class CappedFileHistory(FileHistory):
    """prompt_toolkit's FileHistory (the same file format), loading only the newest entries."""

    def __init__(self, filename: str, *, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        super().__init__(filename)
        self.max_entries = max_entries
        self.max_chars = max_chars

    def load_history_strings(self) -> Iterable[str]:
        path = Path(os.fsdecode(self.filename))
        try:
            data = path.read_bytes()
        except OSError:
            return []
        entries = _entries(data)
        loaded: list[_Entry] = []  # newest first
        chars = 0
        for entry in reversed(entries):
            if len(loaded) == self.max_entries:
                break
            if len(entry.text) > self.max_chars:
                continue
            if chars + len(entry.text) > self.max_chars:
                break
            loaded.append(entry)
            chars += len(entry.text)
        too_big = len(entries) > 2 * self.max_entries or len(data) > 2 * self.max_chars
        if len(loaded) < len(entries) and too_big:
            _rewrite(path, b"".join(data[entry.start : entry.end] for entry in reversed(loaded)))
        return [entry.text for entry in loaded]


def _entries(data: bytes) -> list[_Entry]:
    """The entries of a history file, oldest first: each is its "+"-prefixed lines, after header lines."""
    entries: list[_Entry] = []
    lines: list[str] = []
    offset, header, start = 0, 0, 0
    for raw in data.splitlines(keepends=True):
        if raw.startswith(b"+"):
            if not lines:
                start = header
            lines.append(raw[1:].decode("utf-8", errors="replace"))
        else:
            if lines:
                entries.append(_Entry(start, offset, "".join(lines).removesuffix("\n")))
                lines, header = [], offset
        offset += len(raw)
    if lines:
        entries.append(_Entry(start, offset, "".join(lines).removesuffix("\n")))
    return entries


def _rewrite(path: Path, data: bytes) -> None:
    """Replaces the file with `data`, keeping its permissions; left as it is when that fails."""
    with contextlib.suppress(OSError):
        write_path(path, data)
