"""What the sandbox made so a declared path could be bound writable (an empty file for a new one, its
missing folders), and takes away again when the command wrote nothing there."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Placeholder:
    path: Path
    made: tuple[int, int, int]  # (inode, size, mtime in ns) when made
    folder: bool = False

    @staticmethod
    def of(path: Path, *, folder: bool = False) -> Placeholder:
        if not folder:
            # Dated at the epoch: a write or `touch` in the same clock tick as the file was made still shows.
            os.utime(path, ns=(0, 0), follow_symlinks=False)
        stat = os.lstat(path)
        return Placeholder(path, (stat.st_ino, stat.st_size, stat.st_mtime_ns), folder)

    def remove_if_unused(self) -> None:
        with contextlib.suppress(OSError):
            if self.folder:
                os.rmdir(self.path)  # only when empty
                return
            stat = os.lstat(self.path)
            if (stat.st_ino, stat.st_size, stat.st_mtime_ns) == self.made:
                os.unlink(self.path)
