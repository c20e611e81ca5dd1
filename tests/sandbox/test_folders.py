"""The folder listings the per-command walks reuse (paicli/sandbox/folders.py): a folder is read again
exactly when its change time moved, which a command cannot hold still, and one changed a moment ago is
never trusted. The walks built on them (gitdirs, sockets) still see what a command made."""

from __future__ import annotations

import os
import time
from pathlib import Path

from paicli.sandbox.folders import RACY_NS, Folders
from paicli.sandbox.gitdirs import find_git_paths, git_state, walk_folders
from tests.repos import git_init

NAMES = frozenset({".git"})


def later() -> int:
    """A clock far ahead: every folder looks old enough to keep (the racy rule is tested on its own)."""
    return time.time_ns() + 10 * RACY_NS


def tick_past(folder: Path, probes: Path) -> None:
    """Until the filesystem's clock has moved past `folder`'s change time (a few ms on a coarse clock), so
    the next change cannot share its timestamp; the probe file lives in `probes`, away from what is walked.
    Waits on timestamps, asserts nothing about time."""
    probe = probes / ".tick"
    while True:
        probe.touch()
        if os.stat(probe).st_ctime_ns > os.stat(folder).st_ctime_ns:
            probe.unlink()
            return


def test_an_unchanged_folder_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    folders = Folders(NAMES, clock=later)
    first = folders.listing(str(tmp_path / "a"))
    assert first is not None and first.count == 1 and folders.listing(str(tmp_path / "a")) is first
    (tmp_path / "a" / "f.txt").write_text("changed contents do not matter")
    assert folders.listing(str(tmp_path / "a")) is first and folders.reads == 1


def test_an_entry_added_removed_or_renamed_is_seen(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    folders = Folders(NAMES, clock=later)
    for change in (
        lambda: (folder / ".git").mkdir(),
        lambda: (folder / ".git").rename(folder / "x"),
        lambda: (folder / "x").rmdir(),
    ):
        folders.listing(str(folder))
        tick_past(folder, tmp_path)
        change()
        listing = folders.listing(str(folder))
        assert listing is not None
    assert listing.count == 0 and folders.reads == 4  # read once more after each change


def test_setting_the_times_back_cannot_hide_a_new_git_dir(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    folders = Folders(NAMES, clock=later)
    folders.listing(str(folder))
    old = os.stat(folder)
    tick_past(folder, tmp_path)
    (folder / ".git").mkdir()
    os.utime(folder, ns=(old.st_atime_ns, old.st_mtime_ns))  # what `touch -d` can do; the ctime moves on
    listing = folders.listing(str(folder))
    assert listing is not None and listing.named == ((".git", True),)


def test_a_folder_replaced_by_another_is_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    folders = Folders(NAMES, clock=later)
    folders.listing(str(folder))
    folder.rename(tmp_path / "moved")
    folder.mkdir()
    (folder / ".git").write_text("gitdir: elsewhere\n")
    listing = folders.listing(str(folder))
    assert listing is not None and listing.named == ((".git", False),)


def test_a_folder_changed_a_moment_ago_is_never_kept(tmp_path: Path) -> None:
    folders = Folders(NAMES)  # the real clock: tmp_path was made just now
    folders.listing(str(tmp_path))
    folders.listing(str(tmp_path))
    assert folders.reads == 2


def test_symlinks_and_files_are_no_folders(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    os.symlink(tmp_path, tmp_path / "link")
    folders = Folders(NAMES, clock=later)
    assert folders.listing(str(tmp_path / "file")) is None and folders.listing(str(tmp_path / "link")) is None
    listing = folders.listing(str(tmp_path))
    assert listing is not None and listing.below == () and listing.count == 2


def test_the_walk_sees_a_git_dir_made_deep_in_a_tree_walked_before(tmp_path: Path) -> None:
    workspace = git_init(tmp_path / "ws")
    deep = workspace / "a" / "b" / "c"
    deep.mkdir(parents=True)
    folders = walk_folders(clock=later)
    before = git_state(workspace, folders=folders)
    reads = folders.reads
    assert git_state(workspace, folders=folders) == before and folders.reads == reads  # nothing read again
    tick_past(deep, tmp_path)
    git_init(deep / "d")
    added = before.added(git_state(workspace, folders=folders))
    assert added == [deep / "d" / ".git"]
    assert folders.reads - reads == 2  # c, which changed, and d, which is new
    assert deep / "d" / ".git" in find_git_paths(workspace, folders=folders).git_dirs
