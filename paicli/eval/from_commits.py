"""`paicli eval from-commits REPO [--since REF] [-n N] --test-command CMD --out DIR`: real commits of a
repository made into a suite.

The commits looked at are the non-merge commits reachable from HEAD (after REF with --since), newest first;
the first N that change both test files and other files become tasks:

- start: a fresh one-commit repository with the parent commit's files (so the test files are the parent's
  versions: the commit's test changes are not there), no history of the original (commit_export.py);
- goal: the commit message;
- hidden: the commit's versions of the test files it added or changed;
- check: the user's test command (`{tests}` in it: the task's test files);
- setup: the user's --setup command, when given (installing the project, say).

A path is a test file when a folder on its way is named test, tests, testing, spec or __tests__, or its
name looks like a test (test_*.py, *_test.py, *_test.go, *.test.js, *.spec.ts, conftest.py, ...). A commit
that only deletes test files (nothing to hide) or has an empty message is passed over too, and so is one
whose other files are all documentation or CI settings (docs/, .github/, *.md, *.rst, *.txt, a changelog,
...): its tests would pass on the start as they are. Test files the commit deletes are in the start (the
parent's files); its check removes them before the test command runs, as the commit did."""

from __future__ import annotations

import json
import re
import shlex
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
TESTS_PLACEHOLDER = "{tests}"  # in --test-command: the task's own test files
DOC_FOLDERS = {"doc", "docs", ".github", ".gitlab", ".circleci", "changelog.d", "newsfragments"}
DOC_SUFFIXES = {".md", ".rst", ".txt", ".adoc", ".rdoc"}
DOC_NAMES = re.compile(r"^(changes|changelog|history|news|authors|contributors|license|licence|copying|readme)$", re.I)


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(part.lower() in TEST_FOLDERS for part in parts[:-1]) or bool(TEST_NAME.match(parts[-1]))


def is_doc_path(path: str) -> bool:
    """Documentation, a changelog or CI settings: a change to it alone cannot make a test pass."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        any(part.lower() in DOC_FOLDERS for part in parts[:-1])
        or PurePosixPath(name).suffix.lower() in DOC_SUFFIXES
        or bool(DOC_NAMES.match(name))
    )


@dataclass(frozen=True)
class CommitTask:
    commit: str
    parent: str
    goal: str
    test_files: tuple[str, ...]  # added or changed by the commit: the hidden check
    deleted_tests: tuple[str, ...] = ()  # deleted by the commit: the check removes them

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
        if not tests or all(is_test_path(c.path) or is_doc_path(c.path) for c in changed):
            continue  # only code, or only tests (with documentation)
        kept = tuple(sorted(c.path for c in tests if c.status != "D"))
        deleted = tuple(sorted({c.path for c in tests if c.status == "D"} - set(kept)))
        goal = _message(repo, commit)
        if not kept or not goal:
            continue
        tasks.append(CommitTask(commit, parents[0], goal, kept, deleted))
        if len(tasks) == n:
            break
    return tasks


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def check_of(task: CommitTask, test_command: str) -> str | None:
    """The task's own check (None: the suite's): `{tests}` in the command becomes the commit's test files
    (those named like tests, else their folders), and test files the commit deleted are removed first."""
    command = test_command
    if TESTS_PLACEHOLDER in command:
        named = [path for path in task.test_files if TEST_NAME.match(PurePosixPath(path).name)]
        named = [path for path in named if PurePosixPath(path).name != "conftest.py"]
        chosen = named or sorted({str(PurePosixPath(path).parent) for path in task.test_files})
        arguments = [shlex.quote(f"./{path}" if path.startswith("-") else path) for path in chosen]
        command = command.replace(TESTS_PLACEHOLDER, " ".join(arguments))
    if task.deleted_tests:
        command = f"rm -f -- {' '.join(shlex.quote(path) for path in task.deleted_tests)} && {command}"
    return None if command == test_command else command


def suite_text(
    name: str, description: str, test_command: str, tasks: list[CommitTask], setup: str | None = None
) -> str:
    lines = [
        f"name = {toml_string(name)}",
        f"description = {toml_string(description)}",
        "",
        "[defaults]",
        f"check = {toml_string(test_command.replace(TESTS_PLACEHOLDER, '.'))}",
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
        if setup:
            lines.append(f"setup = {toml_string(setup)}")
        if (check := check_of(task, test_command)) is not None:
            lines.append(f"check = {toml_string(check)}")
    return "\n".join(lines) + "\n"


def _usage_problem(
    repo: Path, since: str | None, n: int, test_command: str, out: Path, setup: str | None
) -> str | None:
    if n < 1:
        return "-n must be at least 1"
    if not test_command.strip():
        return "--test-command is empty: give the command that runs the tests"
    if setup is not None and not setup.strip():
        return "--setup is empty: give the command that prepares a task (or leave it out)"
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
    setup: str | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    shown, errors = stdout or sys.stdout, stderr or sys.stderr
    problem = _usage_problem(repo, since, n, test_command, out, setup)
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
        text = suite_text(name, f"{len(tasks)} commits of {repo.resolve().name}", test_command, tasks, setup)
        Suite.model_validate({**tomllib.loads(text), "root": out})  # what the runner will read: valid
        write_path(out / SUITE_FILE, text.encode("utf-8"))
    except (GitError, OSError) as err:
        print(f"paicli eval from-commits: {one_line(str(err), 300)}", file=errors)
        return EXIT_FAILED
    print(f"wrote {one_line(str(out / SUITE_FILE), 200)} with {counted(len(tasks), 'task')}", file=shown)
    return EXIT_OK
