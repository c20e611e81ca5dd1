"""A run's files: the starting copy (a folder, or a local repository cloned at a commit), what the agent
changed, and the hidden check copied over the result without writing through the agent's symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from paicli.eval.records import Suite, TaskSpec
from paicli.eval.workdir import changed_files, copy_hidden, make_start, snapshot


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_repository_is_fetched_at_the_commit_without_its_later_history(tmp_path: Path) -> None:
    repo = tmp_path / "suite" / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("two\n")
    git(repo, "commit", "-qam", "two")
    task = TaskSpec(id="t", goal="g", repo="repo", commit=first[:8], hidden="h")  # a short hash
    suite = Suite(name="s", tasks=(task,), root=tmp_path / "suite")
    make_start(suite, suite.tasks[0], tmp_path / "work", dict(os.environ))
    assert (tmp_path / "work" / "a.txt").read_text() == "one\n"
    assert git(tmp_path / "work", "log", "--format=%s", "--all") == "one"  # the later commit is not there to read


def test_changed_files_are_created_deleted_or_different(tmp_path: Path) -> None:
    (tmp_path / "same.py").write_text("x\n")
    (tmp_path / "edit.py").write_text("x\n")
    (tmp_path / "gone.py").write_text("x\n")
    (tmp_path / "__pycache__").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "same.py").write_text("x\n")  # written again, the same bytes
    (tmp_path / "edit.py").write_text("y\n")
    (tmp_path / "gone.py").unlink()
    (tmp_path / "new.py").write_text("z\n")
    (tmp_path / "__pycache__" / "c.pyc").write_text("cache")
    assert changed_files(before, snapshot(tmp_path)) == ("edit.py", "gone.py", "new.py")


def test_the_hidden_check_replaces_a_symlink_instead_of_writing_through_it(tmp_path: Path) -> None:
    hidden, work, outside = tmp_path / "hidden", tmp_path / "work", tmp_path / "outside"
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "test_x.py").write_text("check\n")
    (hidden / "conftest.py").write_text("conf\n")
    outside.mkdir()
    work.mkdir()
    (work / "tests").symlink_to(outside)
    (work / "conftest.py").symlink_to(outside / "planted.py")
    copy_hidden(hidden, work)
    assert list(outside.iterdir()) == []
    assert (work / "tests" / "test_x.py").read_text() == "check\n" and not (work / "tests").is_symlink()
    assert (work / "conftest.py").read_text() == "conf\n" and not (work / "conftest.py").is_symlink()
