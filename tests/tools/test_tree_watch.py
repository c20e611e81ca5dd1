"""The folder watch under the watched listing (real inotify, real folders): every change made before a
drain is in it; what it cannot follow (a queue overflow, a folder moved, the root removed, a git folder
replaced) is reported as lost rather than as a partial answer."""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

import pytest

from paicli.tools import tree_watch
from paicli.tools.tree_watch import IN_CREATE, IN_ISDIR, IN_Q_OVERFLOW, TreeWatch, file_system, parse_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def watch_of(root: Path, folders: list[str] | None = None, extra: list[Path] | None = None) -> TreeWatch:
    if folders is None:
        folders = [str(p.relative_to(root)) for p in sorted(root.rglob("*")) if p.is_dir() and not p.is_symlink()]
    watch = TreeWatch.start(root, folders, extra or [])
    assert watch is not None, f"no watch on {file_system(root)}"
    return watch


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("a\n")
    (root / "top.txt").write_text("t\n")
    return root


def test_each_kind_of_change_names_its_path(tree: Path) -> None:
    watch = watch_of(tree)
    assert watch.drain().paths == set()
    with open(tree / "src" / "pkg" / "a.py", "a") as file:  # written in place
        file.write("more\n")
    (tree / "new.txt").write_text("n\n")
    (tree / "top.txt").unlink()
    os.utime(tree / "src" / "pkg" / "a.py", ns=(1, 1))
    (tree / "src" / "link").symlink_to("pkg")
    os.replace(tree / "new.txt", tree / "src" / "moved.txt")
    changes = watch.drain()
    assert not changes.lost
    assert changes.paths == {"src/pkg/a.py", "new.txt", "top.txt", "src/link", "src/moved.txt"}
    assert watch.drain().paths == set()  # drained once
    watch.close()


def test_a_folder_made_later_is_watched_with_all_below_it(tree: Path) -> None:
    watch = watch_of(tree)
    (tree / "deep" / "er" / "est").mkdir(parents=True)
    (tree / "deep" / "er" / "est" / "before.py").write_text("written before its folder was watched\n")
    first = watch.drain()
    assert "deep" in first.paths and not first.lost  # the folder stands for everything below it
    (tree / "deep" / "er" / "est" / "after.py").write_text("after\n")
    assert watch.drain().paths == {"deep/er/est/after.py"}
    (tree / "deep" / ".git").mkdir()  # a version control folder is reported, never watched
    (tree / "deep" / ".git" / "index").write_text("")
    assert watch.drain().paths == {"deep/.git"}
    watch.close()


def test_what_a_watch_cannot_follow_is_reported_lost(tree: Path) -> None:
    watch = watch_of(tree)
    os.rename(tree / "src" / "pkg", tree / "src" / "renamed")  # its watch would name the old path
    assert watch.drain().lost
    assert not watch.drain().lost  # reported once; the caller watches anew
    watch.close()
    watch = watch_of(tree)
    shutil.rmtree(tree)
    assert watch.drain().lost
    watch.close()


def test_a_queue_overflow_is_reported_lost(tree: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip("the kernel's queue is too long to fill quickly")
    watch = watch_of(tree)
    one, two = tree / "one.txt", tree / "two.txt"
    with open(one, "w") as a, open(two, "w") as b:  # alternating writes: the kernel merges no two events
        for _ in range(limit // 2 + 100):
            a.write("x")
            a.flush()
            b.write("y")
            b.flush()
    assert watch.drain().lost
    watch.close()


def test_changes_in_an_extra_folder_are_reported_apart(tree: Path, tmp_path: Path) -> None:
    git_folder = tmp_path / "gitdir"
    git_folder.mkdir()
    watch = watch_of(tree, extra=[git_folder, tmp_path / "absent"])
    (git_folder / "index.lock").write_text("")
    os.replace(git_folder / "index.lock", git_folder / "index")
    changes = watch.drain()
    assert changes.extra == {str(git_folder): {"index.lock", "index"}} and not changes.paths
    shutil.rmtree(git_folder)
    assert watch.drain().lost  # the git folder replaced: its new self would not be watched
    watch.close()


def test_no_watch_beyond_the_folder_limit(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_watch, "MAX_WATCHES", 2)
    assert TreeWatch.start(tree, ["src", "src/pkg"]) is None
    monkeypatch.setattr(tree_watch, "MAX_WATCHES", 3)
    watch = TreeWatch.start(tree, ["src", "src/pkg"])
    assert watch is not None
    (tree / "src" / "pkg" / "new").mkdir()  # a fourth folder cannot be watched: the watch says so
    assert watch.drain().lost
    watch.close()


def test_no_watch_on_a_file_system_that_is_not_local(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_watch, "file_system", lambda path: "nfs4")
    assert TreeWatch.start(tree, []) is None


def test_file_system_names_the_nearest_mount() -> None:
    assert file_system(Path("/proc/self")) == "proc"
    assert file_system(Path("/")) != ""


def test_events_are_parsed_as_the_kernel_writes_them() -> None:
    name = os.fsencode("caf\udce9.py")  # not UTF-8: kept as the file system's bytes
    padded = name + b"\0" * (16 - len(name))
    data = struct.pack("iIII", 3, IN_CREATE | IN_ISDIR, 0, len(padded)) + padded
    data += struct.pack("iIII", -1, IN_Q_OVERFLOW, 0, 0)
    assert list(parse_events(data)) == [(3, IN_CREATE | IN_ISDIR, "caf\udce9.py"), (-1, IN_Q_OVERFLOW, "")]
    assert list(parse_events(data[:10])) == []  # a cut event is not read


def test_a_closed_watch_reads_nothing_and_closes_once(tree: Path) -> None:
    watch = watch_of(tree)
    watch.close()
    watch.close()
    assert watch.drain().paths == set()
