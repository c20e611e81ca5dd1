"""The lister's git: a listing checked against the work tree or not, and no configuration look-up for
the git calls of a listing or a grep_code run (counted by a git on PATH that writes down how it was
called): every neutralised key at its neutral value, so neither a repository's nor the user's
fsmonitor runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs
from paicli.tools.file_lister import ignored_entries, list_files
from paicli.tools.git_listing import Found, Git, SharedGit
from tests.tools.test_file_lister import git, write

REAL_GIT = shutil.which("git")


def repository(workspace: Path) -> Path:
    """Tracked files of which one is deleted, one changed, one skip-worktree (still in the work tree) and
    one a symlink; an untracked file and an ignored one."""
    files = {"a.py": "x = 1\n", "gone.py": "x\n", "changed.py": "x\n", "sparse.py": "x\n", ".gitignore": "*.log\n"}
    write(workspace, files)
    (workspace / "link.py").symlink_to("a.py")
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "c")
    git(workspace, "update-index", "--skip-worktree", "sparse.py")
    (workspace / "gone.py").unlink()
    (workspace / "changed.py").write_text("changed\n")
    write(workspace, {"new.py": "new\n", "debug.log": "ignored\n"})
    return workspace


def listed(workspace: Path, *, worktree: bool) -> tuple[list[str], Found]:
    found_git = Git.find(workspace)
    assert found_git is not None
    found = Found()
    listing = found_git.listing(workspace, found, worktree=worktree)
    assert listing is not None
    return sorted(listing[0]), found


def test_checked_against_the_work_tree_the_listing_drops_deleted_files_and_knows_the_unchanged_ones(
    workspace: Path,
) -> None:
    files, found = listed(repository(workspace), worktree=True)
    assert files == [".gitignore", "a.py", "changed.py", "link.py", "new.py"]
    assert found.links == {"link.py"}
    assert set(found.versions) == {".gitignore", "a.py", "link.py"}


def test_unchecked_the_listing_keeps_deleted_files_for_the_caller_to_stat_and_claims_no_version(
    workspace: Path,
) -> None:
    files, found = listed(repository(workspace), worktree=False)
    assert files == [".gitignore", "a.py", "changed.py", "gone.py", "link.py", "new.py"]  # sparse.py: still out
    assert found.links == {"link.py"}
    assert found.versions == {}


@pytest.fixture
def logging_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git first on PATH (outside the workspace) that logs its arguments, then runs the real one."""
    assert REAL_GIT is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git.log"
    script = folder / "git"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{REAL_GIT}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return log


@pytest.mark.parametrize("path", [".", "src"])
async def test_a_grep_code_run_looks_no_configuration_up_and_lists_without_statting(
    workspace: Path, logging_git: Path, path: str
) -> None:
    write(workspace, {"src/a.py": "def handler(): pass\n", "build/b.py": "def handler(): pass\n"})
    write(workspace, {".gitignore": "build/\n"})
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    logging_git.write_text("")
    output = await GrepCode().run(GrepCodeArgs(pattern="handler", path=path), ToolContext(workspace=workspace))
    assert output.splitlines()[0] == "src/a.py (1 match)" and "build/" not in output
    calls = logging_git.read_text().splitlines()
    assert not any(call.startswith("config ") for call in calls)
    listings = [call for call in calls if call.startswith("ls-files") and "--cached" in call]
    assert any("--ignored" in call for call in calls), calls
    assert len(listings) == 1 and "--deleted" not in listings[0] and "--modified" not in listings[0]


def test_shared_git_is_found_once_whichever_thread_asks_first(workspace: Path, logging_git: Path) -> None:
    git(workspace, "init", "-q")
    logging_git.write_text("")
    shared = SharedGit(workspace)
    got: list[Git | None] = []
    threads = [threading.Thread(target=lambda: got.append(shared.get())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 4 and got[0] is not None and all(one is got[0] for one in got)
    assert not any(call.startswith("config ") for call in logging_git.read_text().splitlines())
    assert got[0].env["GIT_CONFIG_COUNT"] != "0"  # the neutral values are set all the same


def test_the_users_own_fsmonitor_does_not_run_for_a_listing_either(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\tfsmonitor = {hook}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    write(workspace, {"a.py": "", "b.log": "", ".gitignore": "*.log\n"})
    git(workspace, "init", "-q")
    git(workspace, "add", ".gitignore")
    subprocess.run(["git", "ls-files", "--others"], cwd=workspace, capture_output=True, check=True)
    assert marker.exists()  # the control: plain git runs the user's fsmonitor
    marker.unlink()
    assert list_files(workspace).files == (".gitignore", "a.py")
    assert list_files(workspace, worktree=False).files == (".gitignore", "a.py")
    assert ignored_entries(workspace, "", [("b.log", False)]) == {"b.log"}
    assert not marker.exists()
