"""Reach a file below a root folder without the kernel ever following a symlink on the way.

The workspace guard (guard.py) checks a path when a tool starts. Between that check and the read or
write, anything else running (a command left in the background) can replace a folder by a symlink
to the outside. So the tools walk the path again at the moment they act, one component at a time,
through folder handles opened with O_NOFOLLOW relative to their parent (`dir_fd`). A symlink met on
the way is read here and resolved here: a target that stays inside the root is followed (users do
keep symlinked folders inside repositories), anything else is refused. The caller then creates,
opens and renames relative to the folder handle it got, so it acts on the folder that was checked.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from paicli.tools.base import ToolFailure

MAX_SYMLINKS = 40  # as the kernel: more links than this on one path is a loop
_MAX_RETRIES = 100  # a component that keeps changing between open and readlink
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Step(enum.Enum):
    """What a step of the walk can answer besides a result or a symlink's target."""

    ENTERED = "went down into a folder"
    AGAIN = "the component changed while looked at: look again"


_ENTERED, _AGAIN = _Step.ENTERED, _Step.AGAIN


class OutsideRoot(ToolFailure):
    """A symlink on the path leads outside the root (it may have appeared after the path was checked)."""


@dataclass(frozen=True)
class Located:
    folder: int  # handle of the folder that holds the entry; closed by `located`
    name: str | None  # the entry's name in that folder; None when the path is that folder (`.`, `a/..`)
    parts: tuple[str, ...]  # the real path relative to the root, symlinks resolved


@contextmanager
def located(root: Path, path: Path | str, *, create_folders: bool = False) -> Iterator[Located]:
    """The folder holding `path` (absolute inside `root`, or relative to it) and the entry's name.

    Every symlink on the way, the last component's included, is resolved here and must stay inside
    `root`. The last component need not exist; missing folders before it are created when
    `create_folders`, otherwise they raise FileNotFoundError. A non-folder in the middle raises
    NotADirectoryError.
    """
    walk = _Walk(root)
    try:
        yield walk.run(path, create_folders)
    finally:
        walk.close()


def open_regular(root: Path, path: Path | str) -> int:
    """A read-only handle on the regular file at `path` below `root`.

    Raises FileNotFoundError, IsADirectoryError, or NotRegularFile (a FIFO, device or socket; opened
    without blocking and closed again)."""
    for _ in range(_MAX_RETRIES):
        with located(root, path) as spot:
            if spot.name is None:
                raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
            try:
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
                fd = os.open(spot.name, flags, dir_fd=spot.folder)
            except OSError as error:
                if error.errno == errno.ELOOP:  # became a symlink after the walk: walk again
                    continue
                raise
        kind = os.fstat(fd).st_mode
        if stat.S_ISREG(kind):
            os.set_blocking(fd, True)
            return fd
        os.close(fd)
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
    raise OSError(errno.ELOOP, "the path keeps changing", str(path))


def stat_entry(root: Path, path: Path | str) -> os.stat_result | None:
    """What is at `path` below `root` (symlinks resolved inside the root), or None when nothing is."""
    try:
        with located(root, path) as spot:
            if spot.name is None:
                return os.fstat(spot.folder)
            return os.stat(spot.name, dir_fd=spot.folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


class NotRegularFile(OSError):
    pass


class _Walk:
    def __init__(self, root: Path) -> None:
        self.real_root = PurePosixPath(os.path.realpath(root))
        self.given_root = PurePosixPath(os.path.abspath(root))
        self.folders: list[tuple[int, str]] = []  # (handle, name) from the root down

    def close(self) -> None:
        for fd, _ in self.folders:
            os.close(fd)
        self.folders.clear()

    def run(self, path: Path | str, create_folders: bool) -> Located:
        self.shown = self._shown(PurePosixPath(path))
        self.folders.append((os.open(self.real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), ""))
        self.create_folders = create_folders
        self.hops = self.retries = 0
        pending: deque[str] = deque(self._below_root(PurePosixPath(path)))
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                self._up()
                continue
            last = not pending
            step = self._last(part) if last else self._enter(part)
            if isinstance(step, Located):
                return step
            if step is _AGAIN:
                self._count_retry()
                pending.appendleft(part)
            elif isinstance(step, str):
                self.hops += 1
                if self.hops > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", self.shown)
                pending.extendleft(reversed(self._target_parts(step)))
        return self._result(None)

    def _last(self, name: str) -> Located | str | _Step:
        """The last component: the result, unless it is a symlink (then its target, or _AGAIN)."""
        try:
            info = os.stat(name, dir_fd=self.folders[-1][0], follow_symlinks=False)
        except FileNotFoundError:
            return self._result(name)
        if not stat.S_ISLNK(info.st_mode):
            return self._result(name)
        return self._read_link(name, last=True)

    def _enter(self, name: str) -> str | _Step:
        """Open the folder `name` and go down into it (_ENTERED); or a symlink's target; or _AGAIN."""
        here = self.folders[-1][0]
        try:
            self.folders.append((os.open(name, _FOLDER_FLAGS, dir_fd=here), name))
            return _ENTERED
        except FileNotFoundError:
            if not self.create_folders:
                raise
            with suppress(FileExistsError):
                os.mkdir(name, dir_fd=here)
            return _AGAIN  # open what is there now, whatever it has become
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
        return self._read_link(name, last=False)

    def _read_link(self, name: str, *, last: bool) -> str | _Step:
        """The target of the symlink `name`, or _AGAIN when it changed since it was looked at."""
        here = self.folders[-1][0]
        try:
            return os.readlink(name, dir_fd=here)
        except FileNotFoundError:
            return _AGAIN  # gone: the next look decides (created, or not found)
        except OSError as error:
            if error.errno != errno.EINVAL:
                raise
        try:  # not a symlink (any more): in the middle of a path anything but a folder is an error
            kind = os.stat(name, dir_fd=here, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return _AGAIN
        if not last and not stat.S_ISDIR(kind) and not stat.S_ISLNK(kind):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", self.shown)
        return _AGAIN

    def _count_retry(self) -> None:
        self.retries += 1
        if self.retries > _MAX_RETRIES:
            raise OSError(errno.ELOOP, "the path keeps changing", self.shown)

    def _shown(self, path: PurePosixPath) -> str:
        """How the path is named in messages: relative to the root when it is below it."""
        for root in (self.real_root, self.given_root):
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix() or "."
        return path.as_posix()

    def _below_root(self, path: PurePosixPath) -> tuple[str, ...]:
        """Components of `path` relative to the root; an absolute path must start at the root."""
        if not path.is_absolute():
            return path.parts
        for root in (self.real_root, self.given_root):
            if path.is_relative_to(root):
                return path.relative_to(root).parts
        raise OutsideRoot(f"refused: {self.shown} is outside the workspace ({self.real_root})")

    def _target_parts(self, target: str) -> tuple[str, ...]:
        """Where a symlink leads: relative to its folder, or absolute (then back to the root first)."""
        link = PurePosixPath(target)
        if not link.is_absolute():
            return link.parts
        for root in (self.real_root, self.given_root):
            if link.is_relative_to(root):
                while len(self.folders) > 1:
                    os.close(self.folders.pop()[0])
                return link.relative_to(root).parts
        raise OutsideRoot(f"refused: {self.shown} leads outside the workspace (through a symlink to {target})")

    def _up(self) -> None:
        if len(self.folders) == 1:
            raise OutsideRoot(f"refused: {self.shown} leads outside the workspace ({self.real_root})")
        os.close(self.folders.pop()[0])

    def _result(self, name: str | None) -> Located:
        parts = tuple(part for _, part in self.folders[1:])
        return Located(self.folders[-1][0], name, parts + ((name,) if name else ()))
