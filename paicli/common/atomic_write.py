"""Replacing a file atomically: a reader, or a process killed at any moment, sees the old file or the new
one, never half of it. The one place paicli writes a whole file (tool writes, undo, saved plans, the
learned server capabilities, the prompt's history); standard library only, so every layer may use it.

The sequence: a temp file with a fresh name in the target's folder (O_EXCL | O_NOFOLLOW: never an
existing file, never through a link), every byte written, the permission bits set, fsync, rename over
the target, fsync of the folder (so the rename itself survives a crash). On any exception on the way,
KeyboardInterrupt included, the temp file is removed and the target is left as it was. Only SIGKILL or
a crash can leave a temp file behind: a hidden `.NAME.XXXXXXXX.paicli-tmp` beside the target, never
under its name (`remove_leftovers` clears them where a caller wants that).

Everything happens relative to one handle on the folder (`write_in_folder`): a caller that reached the
folder without following symlinks (tools/beneath.py, tools/confined.py) keeps that guarantee, since
nothing here walks a path again. A symlink that has the target's name is replaced by the new file, never
followed. `write_path` is the same for a path the caller trusts (paicli's own files under ~/.paicli).

The functions are synchronous and hold no lock; run them in a thread from async code
(`asyncio.to_thread`). A task cancelled meanwhile leaves the thread to finish, so the file still ends up
whole, old or new.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

TEMP_SUFFIX = ".paicli-tmp"
NEW_FILE_MODE = 0o644  # the kernel subtracts the umask when the file is created
_NAME_KEEP = 80  # characters of the target's name kept in the temp name (names have a length limit)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_in_folder(
    folder: int,
    name: str,
    data: bytes,
    *,
    mode: int | None = None,
    new_mode: int = NEW_FILE_MODE,
    temp_suffix: str = TEMP_SUFFIX,
) -> None:
    """Replaces the entry `name` in the open folder `folder` with a regular file holding `data`.

    `mode` None keeps the permission bits of the regular file there (a new file, or one replacing
    anything else, gets `new_mode` minus the umask); a number sets exactly those bits, whatever the umask
    (the temp file is private, 0o600, until it has them). `temp_suffix` names this writer's temp files.
    """
    bits = _regular_mode(folder, name) if mode is None else mode

    def fill(temp: str) -> bool:
        try:
            fd = os.open(temp, _CREATE_FLAGS, new_mode if bits is None else 0o600, dir_fd=folder)
        except FileExistsError:
            return False
        try:
            write_all(fd, data)
            if bits is not None:
                os.fchmod(fd, bits)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    _put(folder, name, fill, temp_suffix)


def link_in_folder(folder: int, name: str, target: str, *, temp_suffix: str = TEMP_SUFFIX) -> None:
    """Replaces the entry `name` in `folder` with a symlink to `target`, the same way (undo restores links)."""

    def link(temp: str) -> bool:
        try:
            os.symlink(target, temp, dir_fd=folder)
        except FileExistsError:
            return False
        return True

    _put(folder, name, link, temp_suffix)


def write_path(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """`write_in_folder` for `path`'s folder, created when missing; symlinks on the way are followed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_in_folder(folder, path.name, data, mode=mode)
    finally:
        os.close(folder)


def write_all(fd: int, data: bytes) -> None:
    """Writes every byte of `data` to `fd` (os.write may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove_leftovers(folder: int, name: str, *, temp_suffix: str = TEMP_SUFFIX) -> None:
    """Removes the temp files a writer killed half way left beside `name` (only those of `temp_suffix`)."""
    prefix = f".{name[:_NAME_KEEP]}."
    for entry in os.listdir(folder):
        if entry.startswith(prefix) and entry.endswith(temp_suffix):
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=folder)


def _put(folder: int, name: str, make: Callable[[str], bool], temp_suffix: str) -> None:
    """Makes a temp entry with `make` (False: that name is taken), renames it over `name`, fsyncs the folder.

    One `try` from before the temp exists to after the rename: an interrupt at any point between removes it.
    """
    while True:
        temp = f".{name[:_NAME_KEEP]}.{os.urandom(4).hex()}{temp_suffix}"
        try:
            if not make(temp):
                continue  # someone else's file has that name: not ours to remove
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            _unlink(folder, temp)
            raise
        break
    with contextlib.suppress(OSError):  # some filesystems refuse fsync on a folder; the data is safe anyway
        os.fsync(folder)


def _regular_mode(folder: int, name: str) -> int | None:
    """The permission bits of the regular file `name` (not followed if it is a symlink); None otherwise."""
    try:
        existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return stat.S_IMODE(existing.st_mode) if stat.S_ISREG(existing.st_mode) else None


def _unlink(folder: int, temp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temp, dir_fd=folder)
