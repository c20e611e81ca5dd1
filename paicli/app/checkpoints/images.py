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
from dataclasses import dataclass
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


def shown_path(path: str) -> str:
    """A path as events, saved plans and the screen show it: bytes that are not UTF-8 (held as lone
    surrogates, as os.fsdecode gives them) as `\\xff` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


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


@dataclass(frozen=True)
class Found:
    """What is at a path: a symlink (`target`), a regular file (`fd`, open for reading, at its start),
    or something a checkpoint cannot hold (neither: a folder, a FIFO)."""

    mode: str
    target: bytes | None = None
    fd: int | None = None


def look_in(folder: int, name: str) -> Found | None:
    """What `name` in the open `folder` is, never following a symlink; a regular file comes opened (its
    `fd` is the caller's to close). None when nothing is there."""
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return Found(SYMLINK, target=os.fsencode(os.readlink(name, dir_fd=folder)))
    if not stat.S_ISREG(st.st_mode):
        return Found(OTHER.mode)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(name, flags, dir_fd=folder)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # swapped for something else since the look above
        os.close(fd)
        return Found(OTHER.mode)
    return Found(mode_of(st), fd=fd)


@contextmanager
def found_at(root: Path, path: str) -> Iterator[Found | None]:
    """What is at `path` (None when nothing is, or only through a symlinked folder). A regular file is
    opened with O_NOFOLLOW and never read into memory here; the handle closes with the block."""
    parts = check_relative(path)
    try:
        with parent_folder(root, parts) as folder:
            found = None if folder is None else look_in(folder, parts[-1])
    except UnsafePath:
        found = None
    try:
        yield found
    finally:
        if found is not None and found.fd is not None:
            os.close(found.fd)


def read_all(fd: int, limit: int) -> bytes | None:
    """An open file's bytes, None when there are more than `limit`."""
    chunks, size = [], 0
    while chunk := os.read(fd, _CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None
    return b"".join(chunks)


def hash_file(fd: int) -> str:
    """The blob id of an open regular file, read in chunks (a file that changes meanwhile is read again
    whole)."""
    size = os.fstat(fd).st_size
    digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
    read = 0
    while chunk := os.read(fd, _CHUNK):
        digest.update(chunk)
        read += len(chunk)
    if read == size:
        return digest.hexdigest()
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, _CHUNK):
        chunks.append(chunk)
    return blob_id(b"".join(chunks))


def disk_image(root: Path, path: str) -> Image | None:
    """What `path` holds now, as git would name it (its content hashed, never kept)."""
    with found_at(root, path) as found:
        if found is None:
            return None
        if found.target is not None:
            return Image(mode=found.mode, sha=blob_id(found.target))
        if found.fd is None:
            return OTHER
        return Image(mode=found.mode, sha=hash_file(found.fd))
