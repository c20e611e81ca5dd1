"""Files a repository ships, read and written without following a symlink or blocking on a special file.

A cloned repository decides what its `.paicli/` holds: a config, prompt overrides, saved plans. Any of
them, or the folders on the way, may be a symlink to somewhere else (another repository's trusted
config, `/dev/zero`, the user's files), a FIFO that blocks a reader forever, or a sparse file of a
gigabyte. So paicli reaches them only through this module:

- `open_folder(root, parts)` opens each folder below `root` relative to its parent's handle with
  `O_NOFOLLOW | O_DIRECTORY`: a symlinked `.paicli` or `plans` is refused, never followed, and a rename
  between the check and the use cannot redirect anything (there is no check apart from the use).
- `read_regular(folder, name, limit)` looks at the entry first (`lstat`: no open of a device or FIFO at
  all), then opens it with `O_NOFOLLOW | O_NONBLOCK` and checks the handle again (`fstat`), and refuses
  anything that is not a regular file or is larger than `limit` before reading a byte of it.
- `create_new(folder, name)` works relative to the same handle, and so does the atomic write
  (`write_in_folder`, paicli/common/atomic_write.py).

`read_path(path, limit)` is for a path the user named (`--from FILE`, their own config): symlinks are
followed there (the user chose the path), but only a regular file under the limit is read.

Every refusal is an `UnsafeFile` (a ConfigError) whose message is one line naming the path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from paicli.common.errors import ConfigError

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_MODE = 0o644
_CHUNK = 1 << 20


class UnsafeFile(ConfigError):
    """A file or folder paicli refuses to read or write (symlink, special file, too large)."""


def human_size(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def kind_of(mode: int) -> str:
    kinds = (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def open_folder(root: Path, parts: Sequence[str], *, create: bool = False) -> int:
    """A handle (close it) on root/parts[0]/parts[1]/…, with no symlink followed below `root`.

    `root` itself is opened as given (the workspace the user chose, already resolved). A missing folder
    is created when `create`, else FileNotFoundError. UnsafeFile for a symlink or a non-folder.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    shown = root
    try:
        for part in parts:
            shown = shown / part
            child = _open_child_folder(fd, part, shown, create=create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_folder(parent: int, name: str, shown: Path, *, create: bool) -> int:
    for _ in range(2):
        try:
            return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafeFile(_refusal(parent, name, shown, "a folder")) from None
            raise
    return os.open(name, _FOLDER_FLAGS, dir_fd=parent)


def _refusal(parent: int, name: str, shown: Path, wanted: str) -> str:
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        return f"{shown} is not {wanted}; refused"
    if stat.S_ISLNK(mode):
        target = _link_target(parent, name)
        return f"{shown} is a symlink{target}; paicli does not follow symlinks inside a repository's .paicli"
    return f"{shown} is {kind_of(mode)}, not {wanted}; refused"


def _link_target(parent: int, name: str) -> str:
    try:
        return f" (to {os.readlink(name, dir_fd=parent)!r})"
    except OSError:
        return ""


def read_regular(folder: int, name: str, *, limit: int, shown: Path) -> bytes:
    """The bytes of the regular file `name` in `folder`; UnsafeFile for anything else or anything over
    `limit` bytes; FileNotFoundError when there is no such entry."""
    entry = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if not stat.S_ISREG(entry.st_mode):
        raise UnsafeFile(_refusal(folder, name, shown, "a regular file"))
    _check_size(entry.st_size, limit, shown)
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:  # swapped for a symlink since the look
            raise UnsafeFile(_refusal(folder, name, shown, "a regular file")) from None
        raise
    return _read_open(fd, limit, shown)


def read_path(path: Path, *, limit: int) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed: the user named it), at most `limit`."""
    entry = os.stat(path)
    if not stat.S_ISREG(entry.st_mode):
        raise UnsafeFile(f"{path} is {kind_of(entry.st_mode)}, not a regular file; refused")
    _check_size(entry.st_size, limit, path)
    return _read_open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), limit, path)


def _read_open(fd: int, limit: int, shown: Path) -> bytes:
    """Reads an open handle after checking it again: the entry may have been swapped since it was looked at."""
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise UnsafeFile(f"{shown} is {kind_of(opened.st_mode)}, not a regular file; refused")
        _check_size(opened.st_size, limit, shown)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                _check_size(total, limit, shown)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _check_size(size: int, limit: int, shown: Path) -> None:
    if size > limit:
        raise UnsafeFile(f"{shown} is {human_size(size)}, over the {human_size(limit)} limit; refused")


def entries(folder: int, suffix: str) -> Iterator[tuple[str, os.stat_result]]:
    """(name, lstat) of each entry of `folder` whose name ends in `suffix`, symlinks included (the
    caller decides); entries that vanish meanwhile are passed over."""
    for name in os.listdir(folder):
        if not name.endswith(suffix):
            continue
        try:
            yield name, os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            continue


def create_new(folder: int, name: str) -> bool:
    """Creates the empty file `name` in `folder` if there is no entry of that name (O_EXCL, so of two
    processes asking at once exactly one gets True)."""
    try:
        fd = os.open(name, _CREATE_FLAGS, _NEW_FILE_MODE, dir_fd=folder)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def read_below(root: Path, relative: Sequence[str], *, limit: int) -> bytes:
    """The regular file root/relative[0]/…/relative[-1], no symlink followed below `root`."""
    *folders, name = relative
    fd = open_folder(root, folders)
    try:
        return read_regular(fd, name, limit=limit, shown=root.joinpath(*relative))
    finally:
        os.close(fd)
