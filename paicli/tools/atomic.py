"""Atomic file replacement: a file is either the old one or the new one, never half written.

The temp file is created, and renamed over the target, relative to one handle on the target's
folder. With `root`, that folder is reached by walking below `root` without following any symlink
that leads out of it (paicli/tools/beneath.py), at the moment of the write: a folder swapped for a
symlink after the workspace guard looked cannot send the file elsewhere. A symlink as the last
component is resolved the same way, so writing through a link inside the root replaces its target.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from paicli.tools.beneath import located

_NEW_FILE_MODE = 0o644  # the kernel subtracts the umask when the temp file is created
_TEMP_NAME_KEEP = 80  # characters of the target name kept in the temp name (names have a length limit)


def write_all(fd: int, data: bytes) -> None:
    """Writes every byte of `data` to `fd` (os.write may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def atomic_write(path: Path, data: bytes | str, *, encoding: str = "utf-8", root: Path | None = None) -> None:
    """Write `data` to `path` through a temp file in the same folder, fsync, then rename over `path`.

    Keeps the mode bits of an existing file; a new file gets 0o644 minus the umask. Missing parent
    folders are created. On any exception (KeyboardInterrupt included) the temp file is removed and
    the original file is left untouched. With `root`, `path` must lie below it (see the module doc).
    """
    payload = data.encode(encoding) if isinstance(data, str) else data
    with _target_folder(path, root) as (folder, name):
        try:
            existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            original_mode: int | None = None
        else:
            original_mode = stat.S_IMODE(existing.st_mode) if stat.S_ISREG(existing.st_mode) else None
        temp, fd = _create_temp(folder, name)
        try:
            try:
                write_all(fd, payload)
                if original_mode is not None:
                    os.fchmod(fd, original_mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
        _fsync_folder(folder)


@contextlib.contextmanager
def _target_folder(path: Path, root: Path | None) -> Iterator[tuple[int, str]]:
    if root is not None:
        with located(root, path, create_folders=True) as spot:
            if spot.name is None:
                raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
            yield spot.folder, spot.name
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield folder, path.name
    finally:
        os.close(folder)


def _create_temp(folder: int, name: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temp = f".{name[:_TEMP_NAME_KEEP]}.{secrets.token_hex(4)}.paicli-tmp"
        try:
            fd = os.open(temp, flags, _NEW_FILE_MODE, dir_fd=folder)
        except FileExistsError:
            continue
        return temp, fd


def _fsync_folder(folder: int) -> None:
    """Make the rename itself durable. Some filesystems refuse fsync on a folder; the data is safe anyway."""
    with contextlib.suppress(OSError):
        os.fsync(folder)
