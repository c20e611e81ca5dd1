"""The folders git walks for a workspace's untracked files, what else its listing is read from, and the
stamp that tells when one of them changed.

Shared by the session's listing memo (listing_memo.py stamps each path) and the watched listing
(watched_listing.py watches each folder): the workspace's folders except version control folders and
those git ignores as a whole (`skipped`; one holding a listed file is walked, as git walks it), the
`.gitignore` files in them, and each repository's git folder with the files of it a listing reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from paicli.sandbox.gitdirs import common_dir, gitfile_names
from paicli.tools.file_lister import VCS_FOLDERS

Kind = Literal["folder", "rules", "git"]
GIT_FILES = ("index", "config", "info/exclude")
Stamp = tuple[str, int, int, int] | tuple[str, None, None, None]  # path, ctime_ns, inode, device


def stamp(path: str) -> Stamp:
    """A path's change time, inode and device (no process can set a change time back); Nones if absent."""
    try:
        info = os.lstat(path)
    except OSError:
        return (path, None, None, None)
    return (path, info.st_ctime_ns, info.st_ino, info.st_dev)


def user_git_files() -> list[str]:
    """The user's git config and global excludes at their default places (a listing reads them too)."""
    home = Path.home()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [str(home / ".gitconfig"), str(config / "git" / "config"), str(config / "git" / "ignore")]


def walked(root: str, skipped: set[str], files: Sequence[str]) -> Iterator[tuple[Kind, str]]:
    """(kind, absolute path) of the folders git walks below `root` (not into `skipped`, relative), the
    `.gitignore` files in them ("rules"), and each repository's git folder and listing files ("git")."""
    holding: set[str] | None = None  # the folders of listed files: an ignored folder holding one is walked
    stack = [""]
    while stack:
        folder = stack.pop()
        where = f"{root}/{folder}" if folder else root
        yield "folder", where
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == ".git":
                yield from (("git", path) for path in _git_folder(entry.path, is_dir))
            elif is_dir and entry.name not in VCS_FOLDERS:
                if relative in skipped:
                    holding = holding if holding is not None else {path.rpartition("/")[0] for path in files}
                    if not any(held == relative or held.startswith(relative + "/") for held in holding):
                        continue
                stack.append(relative)
            elif entry.name == ".gitignore":
                yield "rules", entry.path


def git_folders(dot_git: Path) -> list[Path]:
    """A repository's git folder (`.git`, or the one a `.git` file names) and the common folder a linked
    worktree's names: where its index, config and `info/exclude` are."""
    folder = dot_git if dot_git.is_dir() else gitfile_names(dot_git)
    if folder is None:
        return []
    common = common_dir(folder)
    return [folder] if common is None else [folder, common]


def _git_folder(path: str, is_dir: bool) -> Iterator[str]:
    """A repository's git folder and the files of it a listing reads; for a `.git` file, the folder it
    names (and its common folder, for a linked worktree)."""
    yield path
    folder = Path(path) if is_dir else gitfile_names(Path(path))
    if folder is None:
        return
    if not is_dir:
        yield str(folder)
    yield from (str(folder / name) for name in GIT_FILES)
    common = common_dir(folder)
    if common is not None:
        yield str(common)
        yield from (str(common / name) for name in GIT_FILES[1:])
