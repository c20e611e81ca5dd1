"""`paicli eval from-commits REPO [--since REF] [-n N] --test-command CMD --out DIR`: real commits of a
repository made into a suite.

The commits looked at are the non-merge commits reachable from HEAD (after REF with --since), newest first;
the first N that change both test files and other files become tasks:

- start: a fresh one-commit repository with the parent commit's files (so the test files are the parent's
  versions: the commit's test changes are not there), no history of the original (commit_export.py);
- goal: the commit message;
- hidden: the commit's versions of the test files it added or changed;
- check: the user's test command.

A path is a test file when a folder on its way is named test, tests, testing, spec or __tests__, or its
name looks like a test (test_*.py, *_test.py, *_test.go, *.test.js, *.spec.ts, conftest.py, ...). A commit
that only deletes test files (nothing to hide) or has an empty message is passed over too."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TextIO

from paicli.common.atomic_write import write_path
from paicli.common.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from paicli.common.sanitize import one_line, well_formed
from paicli.common.wording import counted
from paicli.eval.commit_export import GitError, changes, git, write_hidden, write_start
from paicli.eval.records import Suite

TEST_FOLDERS = {"test", "tests", "testing", "spec", "specs", "__tests__"}
TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|.*Tests?\.java|.*_spec\.rb|.*_test\.rb"
    r"|.*\.(test|spec)\.[cm]?[jt]sx?)$"
)
SUITE_FILE = "suite.toml"


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(part.lower() in TEST_FOLDERS for part in parts[:-1]) or bool(TEST_NAME.match(parts[-1]))


@dataclass(frozen=True)
class CommitTask:
    commit: str
    parent: str
    goal: str
    test_files: tuple[str, ...]  # added or changed by the commit: the hidden check

    @property
    def id(self) -> str:
        return f"commit-{self.commit[:12]}"


def _message(repo: Path, commit: str) -> str:
    raw = git(repo, "log", "-1", "--format=%B", commit)
    return well_formed(raw.decode("utf-8", errors="replace")).strip()


def commit_tasks(repo: Path, since: str | None, n: int) -> list[CommitTask]:
    """The newest `n` commits that make tasks (see the module docstring)."""
    span = f"{since}..HEAD" if since else "HEAD"
    tasks: list[CommitTask] = []
    for line in git(repo, "rev-list", "--no-merges", "--parents", span, "--").decode("ascii").splitlines():
        commit, *parents = line.split()
        if len(parents) != 1:
            continue  # the root commit: no parent to start from
        changed = changes(repo, parents[0], commit)
        tests = [c for c in changed if is_test_path(c.path)]
        if not tests or len(tests) == len(changed):
            continue  # only code, or only tests
        kept = tuple(sorted(c.path for c in tests if c.status != "D"))
        goal = _message(repo, commit)
        if not kept or not goal:
            continue
        tasks.append(CommitTask(commit=commit, parent=parents[0], goal=goal, test_files=kept))
        if len(tasks) == n:
            break
    return tasks


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def suite_text(name: str, description: str, test_command: str, tasks: list[CommitTask]) -> str:
    lines = [
        f"name = {toml_string(name)}",
        f"description = {toml_string(description)}",
        "",
        "[defaults]",
        f"check = {toml_string(test_command)}",
    ]
    for task in tasks:
        lines += [
            "",
            "[[tasks]]",
            f"id = {toml_string(task.id)}",
            f"goal = {toml_string(task.goal)}",
            f'start = "tasks/{task.id}/start"',
            f'hidden = "tasks/{task.id}/hidden"',
            f'tags = ["from-commits", {toml_string("commit:" + task.commit)}]',
        ]
    return "\n".join(lines) + "\n"


def _usage_problem(repo: Path, since: str | None, n: int, test_command: str, out: Path) -> str | None:
    if n < 1:
        return "-n must be at least 1"
    if not test_command.strip():
        return "--test-command is empty: give the command that runs the tests"
    if since is not None and (not since or since.startswith("-")):
        return f"--since {since!r} is not a git revision"
    if not repo.is_dir():
        return f"{repo} is not a folder"
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return f"{out} exists and is not an empty folder: choose another --out"
    return None


def run_from_commits(
    repo: Path,
    since: str | None,
    n: int,
    test_command: str,
    out: Path,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    shown, errors = stdout or sys.stdout, stderr or sys.stderr
    problem = _usage_problem(repo, since, n, test_command, out)
    if problem is None:
        try:
            git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
            if since is not None:
                git(repo, "rev-parse", "--verify", "--quiet", f"{since}^{{commit}}")
        except GitError:
            problem = f"{repo} has no commit {since!r}" if since else f"{repo} is not a git repository with commits"
    if problem is not None:
        print(f"paicli eval from-commits: {one_line(problem, 300)}", file=errors)
        return EXIT_USAGE
    try:
        tasks = commit_tasks(repo, since, n)
        if not tasks:
            print(
                "paicli eval from-commits: no commit changes both test files and other files "
                + (f"after {one_line(since, 80)}" if since else "in the history"),
                file=errors,
            )
            return EXIT_FAILED
        for task in tasks:
            folder = out / "tasks" / task.id
            write_start(repo, task.parent, folder / "start")
            written = write_hidden(repo, task.commit, list(task.test_files), folder / "hidden")
            print(f"{task.id}: {counted(len(written), 'hidden test file')}; {one_line(task.goal, 70)}", file=shown)
        name = f"{repo.resolve().name or 'repo'}-commits"
        text = suite_text(name, f"{len(tasks)} commits of {repo.resolve().name}", test_command, tasks)
        Suite.model_validate({**tomllib.loads(text), "root": out})  # what the runner will read: valid
        write_path(out / SUITE_FILE, text.encode("utf-8"))
    except (GitError, OSError) as err:
        print(f"paicli eval from-commits: {one_line(str(err), 300)}", file=errors)
        return EXIT_FAILED
    print(f"wrote {one_line(str(out / SUITE_FILE), 200)} with {counted(len(tasks), 'task')}", file=shown)
    return EXIT_OK
