"""The workspace's file lister: git's view (ignore rules at every level, nested repositories, deleted files),
the same rules without git, `.paicliignore` for the model's view only, and a repository's config that
cannot make the listing run a program."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.file_lister import all_files, ignored_entries, is_ignored, list_files


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


TREE = {
    ".gitignore": "build/\n*.log\n.env\n",
    ".env": "SECRET=1\n",
    "src/app.py": "print()\n",
    "src/debug.log": "x\n",
    "src/.gitignore": "generated/\n!keep.log\n",
    "src/keep.log": "kept by a deeper rule\n",
    "src/generated/out.py": "x\n",
    "build/lib/app.py": "x\n",
    "docs/guide.md": "x\n",
    "node_modules/dep/index.js": "x\n",
    ".hidden/config": "x\n",
}
EXPECTED = [
    ".gitignore",
    ".hidden/config",
    "docs/guide.md",
    "src/.gitignore",
    "src/app.py",
    "src/keep.log",
]


def test_git_shows_tracked_and_unignored_files_by_the_rules_at_every_level(workspace: Path) -> None:
    write(workspace, TREE | {"node_modules/.gitignore": "*\n"})
    git(workspace, "init", "-q")
    listing = list_files(workspace)
    assert listing.by_git
    assert list(listing.files) == EXPECTED


def test_without_a_repository_the_same_rules_are_read_with_pathspec(workspace: Path) -> None:
    write(workspace, TREE)
    listing = list_files(workspace)
    assert not listing.by_git
    assert list(listing.files) == EXPECTED  # node_modules/ is left out by default outside git


def test_the_walk_agrees_with_git_on_negations_anchors_and_folder_rules(workspace: Path) -> None:
    rules = "/top.txt\nlogs/\n*.tmp\n!important.tmp\ndeep/**/x.py\nbuild\n"
    files = {
        ".gitignore": rules,
        "top.txt": "",
        "a/top.txt": "",
        "logs/1": "",
        "a/logs/2": "",
        "a.tmp": "",
        "important.tmp": "",
        "deep/one/two/x.py": "",
        "deep/y.py": "",
        "a/build": "",
        "b/build/z": "",
        "logs.txt": "",
        "a/.gitignore": "!top.txt\n*.py\n",
        "a/m.py": "",
    }
    write(workspace, files)
    walked = list_files(workspace).files
    git(workspace, "init", "-q")
    by_git = list_files(workspace)
    assert by_git.by_git
    assert walked == by_git.files


def test_deleted_tracked_files_are_not_listed(workspace: Path) -> None:
    write(workspace, {"a.py": "", "b.py": ""})
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    (workspace / "a.py").unlink()
    assert list_files(workspace).files == ("b.py",)


def test_versions_name_only_tracked_files_git_found_unchanged(workspace: Path) -> None:
    write(workspace, {"same.py": "a\n", "edited.py": "b\n", "marked.py": "c\n", "gone.py": "d\n", "sub/x.py": "e\n"})
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    write(workspace / "inner", {"y.py": ""})
    git(workspace / "inner", "init", "-q")
    git(workspace / "inner", "add", "y.py")
    write(workspace, {"edited.py": "b changed\n", "new.py": "", "marked.py": "c changed\n"})
    git(workspace, "update-index", "--assume-unchanged", "marked.py")  # git would call it unchanged
    (workspace / "gone.py").unlink()
    listing = list_files(workspace)
    blob = subprocess.run(["git", "hash-object", "same.py"], cwd=workspace, capture_output=True, text=True)
    assert listing.versions["same.py"] == blob.stdout.strip()
    assert set(listing.versions) == {"same.py", "sub/x.py", "inner/y.py"}  # a nested repository's, prefixed
    assert "edited.py" in listing.files and "marked.py" in listing.files and "gone.py" not in listing.files


def test_a_tracked_file_stays_listed_although_a_rule_matches_it(workspace: Path) -> None:
    write(workspace, {"dist/keep.js": ""})
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    write(workspace, {"dist/new.js": ""})
    (workspace / ".gitignore").write_text("dist/\n")
    assert list_files(workspace).files == (".gitignore", "dist/keep.js")


def test_info_exclude_and_the_global_excludes_hide_files(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(workspace, {"a.py": "", "local.txt": "", "mine.swp": ""})
    git(workspace, "init", "-q")
    (workspace / ".git" / "info" / "exclude").write_text("local.txt\n")
    global_ignore = Path(os.environ["HOME"]) / ".config" / "git" / "ignore"
    global_ignore.parent.mkdir(parents=True)
    global_ignore.write_text("*.swp\n")
    assert list_files(workspace).files == ("a.py",)
    shutil.rmtree(workspace / ".git")
    assert list_files(workspace).files == ("a.py", "local.txt")  # no info/exclude outside git; the global rules hold


def test_paicliignore_hides_from_the_model_but_not_from_checkpoints(workspace: Path) -> None:
    write(workspace, {".paicliignore": "fixtures/\n*.min.js\n", "fixtures/big.json": "", "a.min.js": "", "a.js": ""})
    write(workspace, {".paicli/plans/p.json": ""})
    git(workspace, "init", "-q")
    assert list_files(workspace).files == (".paicliignore", "a.js")
    assert list_files(workspace, view="checkpoint").files == (".paicliignore", "a.js", "a.min.js", "fixtures/big.json")


def test_nested_repositories_and_submodules_are_listed_file_by_file_by_their_own_rules(workspace: Path) -> None:
    write(workspace, {"main.py": ""})
    git(workspace, "init", "-q")
    nested = workspace / "vendor" / "lib"
    write(nested, {"lib.py": "", "out.o": "", ".gitignore": "*.o\n"})
    git(nested, "init", "-q")
    upstream = workspace.parent / "upstream"
    write(upstream, {"sub.py": ""})
    git(upstream, "init", "-q")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "first")
    git(workspace, "submodule", "add", "-q", str(upstream), "ext")
    write(workspace / "ext", {"scratch.txt": ""})
    assert list_files(workspace).files == (
        ".gitmodules",
        "ext/scratch.txt",
        "ext/sub.py",
        "main.py",
        "vendor/lib/.gitignore",
        "vendor/lib/lib.py",
    )


def test_a_nested_repository_outside_git_is_listed_by_git(workspace: Path) -> None:
    write(workspace, {"a.py": "", "inner/b.py": "", "inner/skip.tmp": "", "inner/.gitignore": "*.tmp\n"})
    git(workspace / "inner", "init", "-q")
    (workspace / "inner" / ".git" / "info" / "exclude").write_text("b.py\n")
    listing = list_files(workspace)
    assert listing.files == ("a.py", "inner/.gitignore")


def test_symlinks_are_listed_as_files_and_never_descended(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": ""})
    write(workspace, {"src/a.py": ""})
    (workspace / "out").symlink_to(outside)
    (workspace / "loop").symlink_to(workspace)
    (workspace / "link.py").symlink_to("src/a.py")
    for with_git in (False, True):
        if with_git:
            git(workspace, "init", "-q")
        assert list_files(workspace).files == ("link.py", "loop", "src/a.py")
        assert list_files(workspace, view="checkpoint").files == ("link.py", "loop", "out", "src/a.py")
        assert "out/secret.txt" not in list(all_files(workspace))


def test_a_gitignore_that_ignores_everything_leaves_only_tracked_files(workspace: Path) -> None:
    write(workspace, {"tracked.py": "", "a/b.py": "", "c.txt": ""})
    git(workspace, "init", "-q")
    git(workspace, "add", "tracked.py")
    (workspace / ".gitignore").write_text("*\n")
    assert list_files(workspace).files == ("tracked.py",)
    shutil.rmtree(workspace / ".git")
    assert list_files(workspace).files == ()


def test_a_planted_fsmonitor_does_not_run(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    write(workspace, {"a.py": ""})
    git(workspace, "init", "-q")
    git(workspace, "config", "core.fsmonitor", str(hook))
    subprocess.run(["git", "ls-files", "--others"], cwd=workspace, capture_output=True, check=True)
    assert marker.exists()  # the control: plain git runs it
    marker.unlink()
    assert list_files(workspace).files == ("a.py",)
    assert ignored_entries(workspace, "", [("a.py", False)]) == set()
    assert not marker.exists()


def test_without_git_on_the_path_the_rules_are_read_here(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(workspace, {".gitignore": "*.log\n", "a.py": "", "b.log": ""})
    git(workspace, "init", "-q")
    monkeypatch.setenv("PATH", str(workspace.parent / "empty"))
    listing = list_files(workspace)
    assert not listing.by_git
    assert listing.files == (".gitignore", "a.py")


@pytest.mark.parametrize("with_git", [False, True])
def test_ignored_entries_of_one_folder(workspace: Path, with_git: bool) -> None:
    write(workspace, TREE | {".paicliignore": "docs/\n"})
    if with_git:
        git(workspace, "init", "-q")
    top = [(".env", False), ("build", True), ("docs", True), ("src", True), ("node_modules", True), (".git", True)]
    expected = {".env", "build", "docs", ".git"} | ({"node_modules"} if not with_git else set())
    assert ignored_entries(workspace, "", top) == expected
    inside = [("app.py", False), ("debug.log", False), ("keep.log", False), ("generated", True)]
    assert ignored_entries(workspace, "src", inside) == {"debug.log", "generated"}
    assert ignored_entries(workspace, "build/lib", [("app.py", False)]) == {"app.py"}
    assert is_ignored(workspace, ".env") and is_ignored(workspace, "build/lib/app.py")
    assert not is_ignored(workspace, "src/app.py")


def test_all_files_lists_ignored_files_too_but_not_the_insides_of_git(workspace: Path) -> None:
    write(workspace, TREE)
    git(workspace, "init", "-q")
    files = list(all_files(workspace))
    assert ".env" in files and "build/lib/app.py" in files and "node_modules/dep/index.js" in files
    assert not any(path.startswith(".git/") for path in files)
    assert files == sorted(files)


def test_ten_thousand_files_are_listed_quickly(workspace: Path) -> None:
    for folder in range(100):
        base = workspace / f"pkg{folder}"
        base.mkdir()
        for n in range(100):
            (base / f"m{n}.py").write_text("")
    (workspace / ".gitignore").write_text("pkg9*/\n")
    for with_git in (False, True):
        if with_git:
            git(workspace, "init", "-q")
        start = time.perf_counter()
        files = list_files(workspace).files
        elapsed = time.perf_counter() - start
        assert len(files) == 1 + 89 * 100
        assert elapsed < 5, elapsed  # about 0.05 s by git, 0.3 s walked, on a quiet machine
