"""What a workspace path holds at one moment, as git names it: an `Image` (mode and blob id), or None
when nothing is there. Reading the disk never follows a symlink: a link is read as a link, and a path
below a symlinked or missing folder counts as absent (nothing of it is inside the workspace)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class Image(BaseModel):
    """A file's content and kind: `mode` is git's (100644, 100755, 120000), `sha` the blob id."""

    model_config = ConfigDict(frozen=True)

    mode: str
    sha: str

    @property
    def is_link(self) -> bool:
        return self.mode == SYMLINK


# A path that holds something a checkpoint cannot take (a folder, a FIFO): never equal to an image.
OTHER = Image(mode="0", sha="")


class UnsafePath(Exception):
    """A path that cannot be restored without following a symlink (or that git could never hold)."""


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def check_relative(path: str) -> tuple[str, ...]:
    """The components of a workspace-relative path; UnsafePath for anything git could not hold."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise UnsafePath(f"{path!r} is not a path inside the workspace")
    if "\0" in path:
        raise UnsafePath("a path with a NUL byte")
    return parts


@contextmanager
def parent_folder(root: Path, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int | None]:
    """A handle on the folder that holds `parts[-1]`, reached below `root` without following any
    symlink; None when a folder on the way is missing (and not `create`d), or is not a folder.
    UnsafePath when a folder on the way is a symlink."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            try:
                child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                os.mkdir(name, 0o777, dir_fd=fd)
                child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno == errno.ELOOP or _is_link(fd, name):
                    raise UnsafePath(f"{'/'.join(parts)}: {name} on the way is a symlink") from None
                if error.errno == errno.ENOTDIR:
                    if create:
                        raise UnsafePath(f"{'/'.join(parts)}: {name} on the way is not a folder") from None
                    yield None
                    return
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def mode_of(st: os.stat_result) -> str:
    return EXECUTABLE if st.st_mode & stat.S_IXUSR else REGULAR


def read_entry(root: Path, path: str) -> tuple[Image, bytes] | None:
    """The image and the bytes (a link's target for a symlink) at `path`, or None when absent.
    A folder or a special file gives (OTHER, b"")."""
    parts = check_relative(path)
    try:
        with parent_folder(root, parts) as folder:
            if folder is None:
                return None
            return _read_in(folder, parts[-1])
    except UnsafePath:
        return None


def _read_in(folder: int, name: str) -> tuple[Image, bytes] | None:
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(name, dir_fd=folder))
        return Image(mode=SYMLINK, sha=blob_id(target)), target
    if not stat.S_ISREG(st.st_mode):
        return OTHER, b""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    try:
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        mode = mode_of(os.fstat(fd))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return Image(mode=mode, sha=blob_id(data)), data


def disk_image(root: Path, path: str) -> Image | None:
    entry = read_entry(root, path)
    return None if entry is None else entry[0]
