"""Reading a suite file (TOML, the shape of paicli/eval/records.py `Suite`) and checking what its shape
cannot: every folder a task names exists, lies inside the suite's folder (no `..`, no absolute path, no
symlink out of it), and no starting folder holds the suite file or a hidden check (it is copied for the
agent whole). Each problem is one line; all of them are reported at once (`SuiteError.problems`)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import ValidationError

from paicli.common.errors import ConfigError
from paicli.eval.records import Suite, TaskSpec

MAX_SUITE_BYTES = 4 << 20  # a suite file is text a person writes: 4 MB is far beyond any


class SuiteError(ConfigError):
    """A suite that cannot be run; str() is the first problem, `problems` all of them (one line each)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.problems = [f"{path}: {problem}" for problem in problems]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(self.problems[0] + more)


def load_suite(path: Path) -> Suite:
    """The suite in `path`, its `root` set to the file's folder (real path); SuiteError on any problem."""
    try:
        if os.path.getsize(path) > MAX_SUITE_BYTES:
            raise SuiteError(path, [f"larger than {MAX_SUITE_BYTES >> 20} MB"])
        raw = path.read_bytes()
    except OSError as err:
        raise SuiteError(path, [f"cannot read it: {err.strerror or err}"]) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as err:
        said = "nested too deeply" if isinstance(err, RecursionError) else f"not valid TOML: {err}"
        raise SuiteError(path, [said]) from None
    root = Path(os.path.realpath(path)).parent
    try:
        suite = Suite.model_validate({**data, "root": root})
    except ValidationError as err:
        raise SuiteError(path, [_problem(error, data) for error in err.errors()]) from None
    problems = ["defaults.check holds a NUL character"] if "\0" in suite.defaults.check else []
    problems += [
        problem for task in suite.tasks for problem in task_problems(suite, task, Path(os.path.realpath(path)))
    ]
    if problems:
        raise SuiteError(path, problems)
    return suite


def _problem(error: object, data: dict[str, object]) -> str:
    """One line for one pydantic error: where (`tasks[2] (id "x").time_limit`) and what."""
    assert isinstance(error, dict)
    location = list(error.get("loc", ()))
    where = ""
    for index, part in enumerate(location):
        if isinstance(part, int):
            where += f"[{part}]"
            tasks = data.get("tasks")
            if index == 1 and location[0] == "tasks" and isinstance(tasks, list) and part < len(tasks):
                task = tasks[part]
                if isinstance(task, dict) and isinstance(task.get("id"), str):
                    where += f" (id {task['id'][:100]!r})"
        else:
            where += ("." if where else "") + str(part)
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def task_problems(suite: Suite, task: TaskSpec, suite_file: Path) -> list[str]:
    """What is wrong with the folders `task` names (none: an empty list)."""
    problems: list[str] = []
    if task.goal.startswith("/"):
        problems.append(f"task {task.id}: a goal may not start with / (chat mode would take it for a custom command)")
    for name in ("goal", "setup", "check", "repo", "commit"):
        if "\0" in (getattr(task, name) or ""):
            problems.append(f"task {task.id}: {name} holds a NUL character")
    hidden, hidden_problem = inside(suite.root, task.hidden)
    if hidden_problem:
        problems.append(f"task {task.id}: hidden = {task.hidden!r}: {hidden_problem}")
    if task.start is not None:
        start, start_problem = inside(suite.root, task.start)
        if start_problem:
            problems.append(f"task {task.id}: start = {task.start!r}: {start_problem}")
        elif start is not None:
            if suite_file.is_relative_to(start):
                problems.append(f"task {task.id}: start = {task.start!r} holds the suite file: the agent would see it")
            for other in suite.tasks:
                other_hidden, bad = inside(suite.root, other.hidden)
                if (
                    bad is None
                    and other_hidden is not None
                    and (other_hidden.is_relative_to(start) or start.is_relative_to(other_hidden))
                ):
                    problems.append(
                        f"task {task.id}: start = {task.start!r} overlaps the hidden check of task {other.id}"
                    )
                    break
    if task.repo is not None and "://" not in task.repo and not task.repo.startswith("git@"):
        repo, repo_problem = inside(suite.root, task.repo)
        if repo_problem:
            problems.append(f"task {task.id}: repo = {task.repo!r}: {repo_problem}")
        elif repo is not None and hidden is not None and (hidden.is_relative_to(repo) or repo.is_relative_to(hidden)):
            problems.append(f"task {task.id}: repo = {task.repo!r} overlaps its hidden check")
    if task.repo is not None and task.commit is not None and not _commit_like(task.commit):
        problems.append(f"task {task.id}: commit = {task.commit[:60]!r} is not a commit name (hex, a tag or a branch)")
    return problems


def inside(root: Path, relative: str) -> tuple[Path | None, str | None]:
    """`relative` resolved inside `root` (symlinks followed), or why not: absolute, escaping, missing, not
    a folder."""
    if not relative or os.path.isabs(relative) or relative.startswith("~"):
        return None, "must be a folder relative to the suite file"
    if "\0" in relative:
        return None, "holds a NUL character"
    real = Path(os.path.realpath(root / relative))
    if real == root or not real.is_relative_to(root):
        return None, "must be a folder inside the suite file's folder (not it, not outside it)"
    if not real.is_dir():
        return None, "no such folder" if not real.exists() else "not a folder"
    return real, None


def _commit_like(name: str) -> bool:
    """A revision git will take as a name and not as an option or a range (`-x`, `a..b`, `HEAD@{..}`)."""
    return (
        bool(name) and not name.startswith("-") and ".." not in name and all(c.isalnum() or c in "._/-" for c in name)
    )
