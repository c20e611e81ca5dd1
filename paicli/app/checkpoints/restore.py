"""Putting contents back into the workspace: each file is either as it was or as it will be, never half
written (temp file in the same folder, fsync, rename), so a kill at any moment leaves every file
before or after. Nothing is ever written through a symlink: folders are walked with O_NOFOLLOW, a
symlink is restored as a link (never followed), and a path below a symlinked folder is refused.

Removals go first (deepest first, then folders they leave empty), then writes in path order.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from paicli.app.checkpoints.images import EXECUTABLE, Image, UnsafePath, check_relative, parent_folder
from paicli.common.atomic_write import link_in_folder, remove_leftovers, write_in_folder

TEMP_SUFFIX = ".paicli-undo"  # its own: only undo clears these (`clean_leftovers`)


def apply(
    root: Path, targets: Mapping[str, Image | None], blobs: Mapping[str, bytes], *, clean_leftovers: bool = False
) -> dict[str, str]:
    """Makes each path hold its target (None: absent). Returns path → error for those it could not."""
    errors: dict[str, str] = {}
    removals = sorted((p for p, image in targets.items() if image is None), key=lambda p: (-p.count("/"), p))
    for path in removals:
        try:
            _remove(root, check_relative(path))
        except (OSError, UnsafePath) as error:
            errors[path] = _reason(error)
    for path in sorted(p for p, image in targets.items() if image is not None):
        image = targets[path]
        assert image is not None
        try:
            _write(root, check_relative(path), image, blobs[image.sha], clean_leftovers)
        except (OSError, UnsafePath, KeyError) as error:
            errors[path] = _reason(error)
    return errors


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)


def _remove(root: Path, parts: tuple[str, ...]) -> None:
    with parent_folder(root, parts) as folder:
        if folder is None:
            return
        try:
            st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            raise UnsafePath(f"{'/'.join(parts)} is a folder now; left as it is")
        os.unlink(parts[-1], dir_fd=folder)
        _fsync(folder)
    _remove_empty_parents(root, parts)


def _remove_empty_parents(root: Path, parts: tuple[str, ...]) -> None:
    for depth in range(len(parts) - 1, 0, -1):
        folder_parts = parts[:depth]
        try:
            with parent_folder(root, folder_parts) as holder:
                if holder is None:
                    return
                os.rmdir(folder_parts[-1], dir_fd=holder)
        except (OSError, UnsafePath):
            return  # not empty (or not ours to remove): stop here


def _write(root: Path, parts: tuple[str, ...], image: Image, data: bytes, clean_leftovers: bool) -> None:
    name = parts[-1]
    with parent_folder(root, parts, create=True) as folder:
        assert folder is not None
        if clean_leftovers:
            remove_leftovers(folder, name, temp_suffix=TEMP_SUFFIX)
        try:
            existing: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            try:
                os.rmdir(name, dir_fd=folder)  # a folder left empty by the removals
            except OSError:
                raise UnsafePath(f"{'/'.join(parts)} is a folder that is not empty; left as it is") from None
            existing = None
        if image.is_link:
            link_in_folder(folder, name, os.fsdecode(data), temp_suffix=TEMP_SUFFIX)
        else:
            mode = _mode(image, existing)
            write_in_folder(folder, name, data, mode=mode, new_mode=_new_file_mode(image), temp_suffix=TEMP_SUFFIX)


def _mode(image: Image, existing: os.stat_result | None) -> int | None:
    """The permission bits to set: the existing file's, with the exec bits as the image says; None for a
    new file (created with the umask's defaults)."""
    if existing is None or not stat.S_ISREG(existing.st_mode):
        return None
    bits = stat.S_IMODE(existing.st_mode)
    if image.mode == EXECUTABLE:
        return bits | ((bits & 0o444) >> 2) | stat.S_IXUSR
    return bits & ~0o111


def _new_file_mode(image: Image) -> int:
    """A new file gets the umask's defaults, with exec bits when the image has them."""
    return 0o777 if image.mode == EXECUTABLE else 0o666


def _fsync(folder: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(folder)
