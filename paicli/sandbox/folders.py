"""Folder listings remembered until the folder changes, so the walks done around every sandboxed command
(gitdirs.py before, for and after it; sockets.py before it) cost a `stat` per folder instead of reading
every entry of the tree again.

A listing is kept with its folder's device, inode and change time (ctime). Adding, removing or renaming
an entry changes its folder's ctime, and no unprivileged process can set a ctime (`touch -d` sets the
access and modification times and moves the ctime to now), so a command cannot make a changed folder
look unchanged. Timestamps are coarse (a kernel tick; a second or two on some filesystems), so a folder
whose ctime lies within RACY_NS of the moment it was read could change again within the same tick: its
listing is not kept, and it is read again next time (git's "racily clean" rule).

What a listing holds is what the walks look for: the sub-folders (symlinks are never followed), the
entries with one of the names asked for (`.git`, ...), with whether each is a folder, and the socket
files. The cache is a memo of the filesystem, one per session (memos.py passes it to whatever walks; a
plain dictionary: reads and writes of one key are atomic, and two threads that read the same folder at
once only do the work twice); it forgets everything once it holds MAX_FOLDERS folders.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass

RACY_NS = 2_000_000_000
MAX_FOLDERS = 200_000


@dataclass(frozen=True)
class Listing:
    below: tuple[str, ...]  # the paths of the sub-folders a walk goes into (not those named in `not_into`)
    named: tuple[tuple[str, bool], ...]  # entries with a name asked for: (name, is a folder)
    sockets: tuple[str, ...]  # names of socket files
    count: int  # entries in all


class Folders:
    """Listings of folders, each read again only when its folder changed (see the module docstring)."""

    def __init__(
        self,
        named: frozenset[str] = frozenset(),
        not_into: frozenset[str] = frozenset(),
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.named = named
        self.not_into = not_into  # names of folders a walk never enters (`.git`, `node_modules`)
        self.clock = clock  # now, in ns since the epoch (the timestamps' clock)
        self._kept: dict[str, tuple[int, int, int, Listing]] = {}
        self.reads = 0  # folders read, not taken from the cache (for tests and the benchmark)

    def listing(self, folder: str) -> Listing | None:
        """What `folder` holds (None when it cannot be read, or is no folder); a symlink is not followed."""
        try:
            before = os.lstat(folder)
        except OSError:
            return None
        kept = self._kept.get(folder)  # only folders are kept: anything else at that path has another inode
        if kept is not None and kept[0] == before.st_ctime_ns and kept[1] == before.st_ino and kept[2] == before.st_dev:
            return kept[3]
        if not stat.S_ISDIR(before.st_mode):
            return None
        started = self.clock()
        listing = self._read(folder)
        if listing is None:
            return None
        try:
            after = os.lstat(folder)
        except OSError:
            return listing
        same = (after.st_ctime_ns, after.st_ino, after.st_dev) == (before.st_ctime_ns, before.st_ino, before.st_dev)
        if same and after.st_ctime_ns < started - RACY_NS:
            if len(self._kept) >= MAX_FOLDERS:
                self._kept.clear()
            self._kept[folder] = (after.st_ctime_ns, after.st_ino, after.st_dev, listing)
        else:
            self._kept.pop(folder, None)
        return listing

    def _read(self, folder: str) -> Listing | None:
        self.reads += 1
        below: list[str] = []
        named: list[tuple[str, bool]] = []
        sockets: list[str] = []
        count = 0
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    count += 1
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                        if is_dir:
                            if entry.name not in self.not_into:
                                below.append(entry.path)
                        elif _special(entry) and stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                            sockets.append(entry.name)
                    except OSError:
                        continue
                    if entry.name in self.named:
                        named.append((entry.name, is_dir))
        except OSError:
            return None
        return Listing(tuple(below), tuple(named), tuple(sockets), count)


def _special(entry: os.DirEntry[str]) -> bool:
    """Neither folder, file nor symlink (by the type the folder gives, no `stat`): a socket, FIFO or device."""
    return not entry.is_file(follow_symlinks=False) and not entry.is_symlink()
