"""The files of a listing sorted out before a search: regular files within the size limit, symlinks,
and those too large to search; what is gone or special is left out. Each is looked at with one `lstat`
relative to the open workspace folder (the kernel walks only the path's own parts). And the session's
verdicts on whether a large file is text (`TextVerdicts`)."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.sandbox.folders import RACY_NS

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_VERDICTS = 100_000
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Selection:
    """The listed files sorted out before the search: what rg may read, what only this process may."""

    regular: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    oversized: list[str] = field(default_factory=list)  # regular files over MAX_FILE_BYTES: not searched

    @property
    def too_large(self) -> int:
        return len(self.oversized)


def select(root: Path, files: Sequence[str]) -> Selection:
    """Regular files and symlinks within the size limit; what is gone, special or too large is left out."""
    chosen = Selection()
    folder = os.open(root, FOLDER_FLAGS)
    try:
        for path in files:
            try:  # relative to the open folder: the kernel walks only the path's own parts
                info = os.lstat(path, dir_fd=folder)
            except (OSError, ValueError):
                continue  # deleted since the listing
            if stat.S_ISLNK(info.st_mode):
                chosen.links.append(path)
            elif stat.S_ISREG(info.st_mode):
                (chosen.oversized if info.st_size > MAX_FILE_BYTES else chosen.regular).append(path)
    finally:
        os.close(folder)
    return chosen


TextKey = tuple[str, int, int, int, int, int]  # path, device, inode, size, mtime, ctime (ns)


class TextVerdicts:
    """Whether a large file is text (no NUL byte), remembered for a session by the file's identity, size
    and times: writing a file moves its ctime, which no unprivileged process can set back. A verdict on a
    file whose ctime lies within RACY_NS of now is not kept (it could change again within the same tick)."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock
        self._known: dict[TextKey, bool] = {}

    def get(self, key: TextKey) -> bool | None:
        return self._known.get(key)

    def put(self, key: TextKey, text: bool) -> None:
        if key[5] < self.clock() - RACY_NS:
            if len(self._known) >= MAX_VERDICTS:
                self._known.clear()
            self._known[key] = text
