"""Atomic file replacement: a file is either the old one or the new one, never half written.

Callers pass a path that the workspace guard has already resolved (symlinks followed), so the rename
replaces the real file and not a link to it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

_NEW_FILE_MODE = 0o644  # the kernel subtracts the umask when the temp file is created
_TEMP_NAME_KEEP = 80  # characters of the target name kept in the temp name (names have a length limit)


def atomic_write(path: Path, data: bytes | str, *, encoding: str = "utf-8") -> None:
    """Write `data` to `path` through a temp file in the same folder, fsync, then rename over `path`.

    Keeps the mode bits of an existing file; a new file gets 0o644 minus the umask. Missing parent
    folders are created. On any exception (KeyboardInterrupt included) the temp file is removed and
    the original file is left untouched.
    """
    payload = data.encode(encoding) if isinstance(data, str) else data
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        original_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        original_mode = None

    temp, fd = _create_temp(folder, path.name)
    try:
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if original_mode is not None:
                os.fchmod(fd, original_mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_folder(folder)


def _create_temp(folder: Path, name: str) -> tuple[Path, int]:
    while True:
        temp = folder / f".{name[:_TEMP_NAME_KEEP]}.{secrets.token_hex(4)}.paicli-tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _NEW_FILE_MODE)
        except FileExistsError:
            continue
        return temp, fd


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable. Some filesystems refuse fsync on a folder; the data is safe anyway."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
