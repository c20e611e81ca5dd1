"""What a checkpoint takes: ignore rules, the size limit, nested repositories, links, odd names, and
tool writes kept exactly even where a checkpoint leaves the file out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from paicli.app.checkpoints import snapshot
from paicli.app.checkpoints.snapshot import BULK
from paicli.app.checkpoints.store import CheckpointStore
from tests.app.checkpoints.conftest import GIT, command, recording, state, tool_write, undo


def tree_of(store: CheckpointStore, commit: str) -> dict[str, str]:
    out = store.git.run(["ls-tree", "-r", "-z", "--full-tree", commit]).split(b"\0")
    return {os.fsdecode(r.split(b"\t", 1)[1]): r.split()[0].decode() for r in out if r}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}
    return subprocess.run([GIT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_a_checkpoint_follows_the_workspace_ignore_rules_and_leaves_out_paicli_state(
    store: CheckpointStore, workspace: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / ".git" / "info" / "exclude").write_text("secret.env\n")
    for name in ("app.py", "debug.log", "build/out.o", "secret.env", ".paicli/plans/p.json", "src/.gitignore"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n")
    (workspace / "src" / ".gitignore").write_text("*.tmp\n")
    (workspace / "src" / "a.tmp").write_text("t\n")
    taken = tree_of(store, store.snapshot("t"))
    assert sorted(taken) == [".gitignore", "app.py", "src/.gitignore"]


def test_big_files_are_left_out_with_one_notice(workspace: Path, home: Path, notices: list[str]) -> None:
    store = CheckpointStore(GIT, workspace, home / "cp", notify=notices.append, max_file_bytes=1000)
    store.ensure()
    (workspace / "big.bin").write_bytes(b"\0" * 2000)
    (workspace / "small.txt").write_text("ok\n")
    assert sorted(tree_of(store, store.snapshot("1"))) == ["small.txt"]
    store.snapshot("2")
    assert len(notices) == 1 and "big.bin" in notices[0] and "limit" in notices[0]


def test_tool_writes_keep_what_they_replaced_even_in_ignored_and_big_files(
    workspace: Path, home: Path, notices: list[str]
) -> None:
    store = CheckpointStore(GIT, workspace, home / "cp", notify=notices.append, max_file_bytes=1000)
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "run.log").write_text("old log\n")
    (workspace / "big.dat").write_bytes(b"A" * 5000)
    before = state(workspace)
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "run.log", "new log\n")
    tool_write(rec, None, "big.dat", b"B" * 6000)
    tool_write(rec, None, "fresh.log", "created\n")
    rec.finish()
    assert {c.path: c.status for c in rec.changes() or []} == {
        "run.log": "modified",
        "big.dat": "modified",
        "fresh.log": "created",
    }
    assert undo(store).code == 0
    assert state(workspace) == before


def test_nested_repositories_with_and_without_commits_are_taken_as_plain_files(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "lib").mkdir()
    git(workspace / "lib", "init", "-q")
    (workspace / "lib" / "l.py").write_text("lib\n")
    git(workspace / "lib", "add", "l.py")
    git(workspace / "lib", "commit", "-qm", "x")
    (workspace / "empty").mkdir()
    git(workspace / "empty", "init", "-q")
    (workspace / "empty" / "e.py").write_text("e\n")
    (workspace / "empty" / "deeper").mkdir()
    git(workspace / "empty" / "deeper", "init", "-q")
    (workspace / "empty" / "deeper" / "d.py").write_text("d\n")
    taken = tree_of(store, store.snapshot("t"))
    assert taken == {"lib/l.py": "100644", "empty/e.py": "100644", "empty/deeper/d.py": "100644"}
    lib_head = (workspace / "lib" / ".git" / "HEAD").read_bytes()
    rec = recording(store)
    rec.begin_step(None)
    command(rec, None, "echo changed > lib/l.py && echo new > empty/n.py && rm empty/deeper/d.py")
    rec.finish()
    assert {c.path for c in rec.changes() or []} == {"lib/l.py", "empty/n.py", "empty/deeper/d.py"}
    assert undo(store).code == 0
    assert (workspace / "lib" / "l.py").read_text() == "lib\n" and (workspace / "empty" / "deeper" / "d.py").exists()
    assert not (workspace / "empty" / "n.py").exists()
    assert (workspace / "lib" / ".git" / "HEAD").read_bytes() == lib_head
    assert git(workspace / "lib", "status", "--porcelain") == ""


def test_odd_names_binary_files_and_links_round_trip(store: CheckpointStore, workspace: Path, tmp_path: Path) -> None:
    names = ["with space.txt", "naïve ünïcode.md", "-leading-dash", "tab\tin name", "new\nline", "日本語/ファイル.txt"]
    for name in names:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"{name}\n")
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)
    os.symlink(tmp_path / "nowhere", workspace / "dangling")
    os.symlink("/etc/passwd", workspace / "outside")
    os.mkfifo(workspace / "pipe")
    with open(os.path.join(os.fsencode(workspace), b"not-utf8-\xff.txt"), "wb") as undecodable:
        undecodable.write(b"latin-1 name\n")
    before = state(workspace)
    rec = recording(store)
    rec.begin_step(None)
    command(
        rec,
        None,
        'for f in *; do [ -f "$f" ] && [ ! -L "$f" ] && echo more >> "$f"; done; '
        "rm dangling outside; echo replaced > outside; printf x > $'made-\\xfe'",
    )
    rec.finish()
    changed = {c.path for c in rec.changes() or []}
    assert {"with space.txt", "naïve ünïcode.md", "-leading-dash", "tab\tin name", "new\nline", "blob.bin"} <= changed
    assert {"not-utf8-\\xff.txt", "made-\\xfe"} <= changed  # shown escaped in events and saved plans
    assert undo(store).code == 0
    assert state(workspace) == before
    assert os.readlink(workspace / "outside") == "/etc/passwd"
    assert "more" not in Path("/etc/passwd").read_text()[-10:]


def test_a_folder_that_is_not_a_git_repository_works(store: CheckpointStore, workspace: Path) -> None:
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "a.txt", "a\n")
    rec.finish()
    assert not (workspace / ".git").exists()
    assert [c.path for c in rec.changes() or []] == ["a.txt"]


def test_many_new_files_go_in_one_pack_and_the_checkpoint_is_the_same(
    workspace: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(BULK + 20):
        (workspace / f"d{n % 5}" / f"f{n}.txt").parent.mkdir(exist_ok=True)
        (workspace / f"d{n % 5}" / f"f{n}.txt").write_text(f"{n}\n")
    (workspace / "big.bin").write_bytes(b"x" * 3000)
    os.symlink("/etc", workspace / "etc-link")
    os.symlink(tmp_path, workspace / "d0" / "outside")
    os.mkfifo(workspace / "d1" / "pipe")
    trees = []
    for bulk in (BULK, 10**9):
        monkeypatch.setattr(snapshot, "BULK", bulk)
        store = CheckpointStore(GIT, workspace, home / f"cp{bulk}", notify=lambda m: None, max_file_bytes=1000)
        store.ensure()
        trees.append(tree_of(store, store.snapshot("first")))
        packs = list((store.git.git_dir / "objects" / "pack").glob("*.pack"))
        assert len(packs) == (1 if bulk == BULK else 0)
    assert trees[0] == trees[1] and len(trees[0]) == BULK + 22 and "big.bin" not in trees[0]


def test_a_workspace_over_the_file_limit_is_not_stored_and_told_once(
    workspace: Path, home: Path, notices: list[str]
) -> None:
    for n in range(30):
        (workspace / f"f{n}.txt").write_text("x\n")
    store = CheckpointStore(GIT, workspace, home / "cp", notify=notices.append, max_new_files=20)
    store.ensure()
    for _ in range(2):  # two turns: one notice
        turn = recording(store)
        turn.begin_step(None)
        tool_write(turn, None, "f0.txt", "changed\n")
        turn.finish()
        assert not turn.active and turn.changes() is None
    assert notices == [
        "checkpoints are off: the workspace has 30 files not yet checkpointed, over checkpoint_max_files (20): "
        "ignore big folders in .gitignore, raise the limit, or set checkpoints = false"
    ]
    assert store.git.run(["ls-files"]) == b""  # nothing was stored


def test_a_workspace_over_the_size_limit_is_not_stored(workspace: Path, home: Path, notices: list[str]) -> None:
    (workspace / "data.bin").write_bytes(b"x" * 3000)
    (workspace / "more.bin").write_bytes(b"y" * 3000)
    store = CheckpointStore(GIT, workspace, home / "cp", notify=notices.append, max_new_bytes=5000)
    store.ensure()
    turn = recording(store)
    turn.begin_step(None)
    turn.finish()
    (notice,) = notices
    assert "the workspace has 0 MB not yet checkpointed, over checkpoint_max_new_mb (0)" in notice


def test_the_limits_count_only_what_is_new_so_a_stored_workspace_may_exceed_them(
    workspace: Path, home: Path, notices: list[str]
) -> None:
    for n in range(15):
        (workspace / f"f{n}.txt").write_text("x\n")
    store = CheckpointStore(GIT, workspace, home / "cp", notify=notices.append, max_new_files=20)
    store.ensure()
    store.snapshot("first")
    for n in range(15, 30):
        (workspace / f"f{n}.txt").write_text("x\n")
    store.snapshot("second")  # 30 files in all, 15 new
    assert len(store.git.run(["ls-files"]).splitlines()) == 30 and notices == []


@pytest.mark.parametrize("in_git", [True, False])
def test_a_checkpoint_takes_the_file_listers_checkpoint_view(
    store: CheckpointStore, workspace: Path, in_git: bool
) -> None:
    from paicli.tools.file_lister import list_files

    if in_git:
        git(workspace, "init", "-q")
        (workspace / ".git" / "info" / "exclude").write_text("secret.env\n")
    files = {
        ".gitignore": "*.log\nbuild/\n",
        ".paicliignore": "fixtures/\n",  # out of the model's view, still taken by checkpoints
        "app.py": "",
        "debug.log": "",
        "build/out.o": "",
        "secret.env": "",
        "fixtures/f.json": "",
        ".paicli/plans/p.json": "",
        "src/.gitignore": "*.tmp\n",
        "src/a.tmp": "",
        "src/b.py": "",
        "node_modules/dep/index.js": "",  # outside git: out of the model's view only
    }
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    (workspace / "link.py").symlink_to("app.py")
    (workspace / "lib").mkdir()
    git(workspace / "lib", "init", "-q")
    (workspace / "lib" / "l.py").write_text("lib\n")
    taken = tree_of(store, store.snapshot("t"))
    assert sorted(taken) == list(list_files(workspace, view="checkpoint").files)
    assert "fixtures/f.json" in taken and "fixtures/f.json" not in list_files(workspace).files


def test_temp_files_of_writes_under_way_are_not_taken_and_a_file_gone_since_listed_is_passed_over(
    store: CheckpointStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another task's (or process's) atomic write leaves its temp file for a moment: a checkpoint listing it
    then failed at update-index once the rename took it away, and checkpoints went off for the plan."""
    (workspace / "app.py").write_text("x\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / ".guide.md.55367d02.paicli-tmp").write_text("half\n")
    (workspace / ".a.py.0011aabb.paicli-undo").write_text("half\n")
    assert sorted(tree_of(store, store.snapshot("t"))) == ["app.py"]
    # a file listed, then gone before git reads it (an editor's own temp file, say)
    (workspace / "soon-gone.txt").write_text("y\n")
    listed = store.snapshots._changed_paths

    def listed_then_removed() -> tuple[list[str], list[str]]:
        adds, drops = listed()
        (workspace / "soon-gone.txt").unlink()
        return adds, drops

    monkeypatch.setattr(store.snapshots, "_changed_paths", listed_then_removed)
    assert sorted(tree_of(store, store.snapshot("t2"))) == ["app.py"]
