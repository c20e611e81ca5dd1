"""A watch on a workspace's folders (Linux inotify): which paths may have changed since it was last asked.

The kernel queues an event inside the very call that changes a folder's entry or a file's content or
metadata, so draining the queue after a change returns it: nothing written before `drain` is missed.
What a watch cannot see, and how it says so (`Changes.lost`): events beyond the kernel's queue
(`IN_Q_OVERFLOW`), a watched folder moved (its watch would name the old path), the root itself moved or
removed, a folder whose watch could not be added. Not seen at all (docs/security.md): writes through
a shared memory mapping, changes made on another machine to a network file system
(`LOCAL_FILE_SYSTEMS` keeps those out).

A folder created after the watch began is watched, with every folder below it, when its event is
drained; its path is reported as changed, so whoever lists it then finds what was written before the
watch was added.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.file_lister import VCS_FOLDERS

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
WATCHED_EVENTS = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
WATCH_MASK = WATCHED_EVENTS | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
LOST = IN_Q_OVERFLOW | IN_UNMOUNT
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
MAX_WATCHES = 50_000  # a workspace of more folders is not watched (listed afresh each time)
LOCAL_FILE_SYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "jfs"})


@dataclass
class Changes:
    """What changed since the previous drain: paths relative to the root (a file, or a folder and all
    below it), the names changed in each extra folder (by its absolute path), and whether anything may
    have been missed (`lost`: trust none of it)."""

    paths: set[str] = field(default_factory=set)
    extra: dict[str, set[str]] = field(default_factory=dict)
    lost: bool = False


class _Inotify:
    def __init__(self) -> None:
        import ctypes  # here, not at start-up: only a session that maps a repository watches one
        import ctypes.util

        self._errno = ctypes.get_errno
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            raise OSError(self._errno(), "inotify_init1")
        self.fd = fd

    def add(self, path: str) -> int:
        wd = int(self._add(self.fd, os.fsencode(path), WATCH_MASK))
        if wd < 0:
            number = self._errno()
            raise OSError(number, os.strerror(number), path)
        return wd

    def read(self) -> bytes:
        if self.fd < 0:
            return b""
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        fd, self.fd = self.fd, -1  # never closed twice: the number may belong to another file by then
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def parse_events(data: bytes) -> Iterator[tuple[int, int, str]]:
    """(watch, mask, name) of each event in what inotify gave (a name "" for the watched folder itself)."""
    offset = 0
    while offset + _HEADER.size <= len(data):
        wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        name = os.fsdecode(data[offset : offset + length].rstrip(b"\0"))
        offset += length
        yield wd, mask, name


class TreeWatch:
    """Watches `root`'s folders given (relative), and extra folders (absolute: a repository's git folder)
    whose changed names are reported apart."""

    def __init__(self, root: Path, inotify: _Inotify) -> None:
        self.root = root
        self._inotify = inotify
        self._folders: dict[int, str] = {}  # watch → folder relative to root ("" for root)
        self._extra: dict[int, str] = {}  # watch → absolute extra folder
        self._lost = False

    @classmethod
    def start(cls, root: Path, folders: Iterable[str], extra: Iterable[Path] = ()) -> TreeWatch | None:
        """A watch on `root` and `folders` below it, None where none can be kept (not Linux, a file system
        that is not local, inotify's limits reached, more than MAX_WATCHES folders)."""
        if not sys.platform.startswith("linux") or file_system(root) not in LOCAL_FILE_SYSTEMS:
            return None
        try:
            watch = cls(root, _Inotify())
        except (OSError, AttributeError):
            return None
        try:
            watch._watch_folder("")
            for folder in folders:
                if folder and not watch._watch_folder(folder):
                    raise OSError(errno.ENOSPC, "too many folders")
            for path in extra:
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    watch._extra[watch._inotify.add(str(path))] = str(path)
        except OSError:
            watch.close()
            return None
        return watch

    @property
    def closed(self) -> bool:
        return self._inotify.fd < 0

    def covers(self, folders: set[str]) -> bool:
        """Whether every one of `folders` (relative, "" for the root) is watched."""
        return folders <= set(self._folders.values())

    def _watch_folder(self, relative: str) -> bool:
        """Adds a watch on one folder; False when no more may be added. A folder gone meanwhile is no error."""
        if len(self._folders) >= MAX_WATCHES:
            return False
        try:
            wd = self._inotify.add(str(self.root / relative) if relative else str(self.root))
        except (FileNotFoundError, NotADirectoryError):
            return True
        except OSError as error:  # at inotify's limits, False; not readable: nothing below it is listed either
            return error.errno not in (errno.ENOSPC, errno.ENOMEM, errno.EMFILE)
        self._folders[wd] = relative
        return True

    def _watch_below(self, relative: str) -> None:
        """A new folder and every folder below it (symlinks not followed, version control folders skipped)."""
        stack = [relative]
        while stack:
            folder = stack.pop()
            if not self._watch_folder(folder):
                self._lost = True
                return
            with contextlib.suppress(OSError), os.scandir(self.root / folder) as entries:
                for entry in entries:
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False) and entry.name not in VCS_FOLDERS:
                            stack.append(f"{folder}/{entry.name}")

    def drain(self) -> Changes:
        """The changes queued since the previous drain (see the module's docstring)."""
        changes = Changes(lost=self._lost)
        for wd, mask, name in parse_events(self._inotify.read()):
            if mask & LOST:
                changes.lost = True
                continue
            if wd in self._extra:
                changes.extra.setdefault(self._extra[wd], set()).add(name)
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
                    changes.lost = True  # a git folder replaced: its new self is not watched
                continue
            folder = self._folders.get(wd)
            if folder is None:
                continue  # a folder removed: its parent's event names it
            if mask & IN_IGNORED:
                del self._folders[wd]
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                if not folder or mask & IN_MOVE_SELF:
                    changes.lost = True  # the root gone, or a folder moved: its watches name old paths
                continue
            path = f"{folder}/{name}" if folder else name
            changes.paths.add(path)
            if mask & IN_ISDIR:
                if mask & (IN_MOVED_FROM | IN_MOVED_TO):
                    changes.lost = True
                elif mask & IN_CREATE and name not in VCS_FOLDERS:
                    self._watch_below(path)
        changes.lost = changes.lost or self._lost
        self._lost = False
        return changes

    def close(self) -> None:
        self._inotify.close()
        self._folders.clear()
        self._extra.clear()

    def __del__(self) -> None:
        self.close()


def file_system(path: Path) -> str:
    """The type of the file system holding `path` (the mount point nearest above it), "" when unknown."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    target = os.path.realpath(path)
    best, kind = -1, ""
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        mount = parts[4].encode().decode("unicode_escape")  # octal escapes such as \040 for a space
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > best:
            best, kind = len(mount), rest.split()[0]
    return kind
