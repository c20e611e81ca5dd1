"""A run's files: the fresh starting copy (a folder copied, or a git repository cloned at a commit), the
snapshot taken before the agent runs, and the files it changed (the snapshot taken again and compared).

A run lives in `<base>/runs/<index>/work` while the agent runs; its check runs there too, or, where other
agents' commands could see that folder (runner.check_in_place), in `<base>/checks/<index>/work`, where it
is moved before its hidden check is copied in: `<base>/checks` is hidden from every agent's sandbox, so
with `--jobs N` no agent can read another run's hidden check either."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from paicli.eval.records import Suite, TaskSpec

# Not the agent's work: version control, paicli's own folder, caches and virtual environments a setup made.
SKIPPED = frozenset(
    {".git", ".paicli", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", "venv", "node_modules"}
)
HASHED_BYTES = 1 << 20  # files up to this size are compared by content, larger ones by size and time
GIT_TIMEOUT = 600.0


class StartError(Exception):
    """The starting state could not be made: the run is an `error` (one line)."""


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    digest: str | None


Snapshot = dict[str, FileState]


def make_start(suite: Suite, task: TaskSpec, work: Path, env: dict[str, str]) -> None:
    """The task's starting state in `work` (which must not exist yet). Symlinks are copied as symlinks:
    the agent's tools refuse what resolves outside its workspace, and the sandbox decides what a command
    reaches. A repository is fetched at its commit alone (`--depth 1`, no tags): its later history, which
    may hold the very change the task asks for, is not there to read."""
    if task.start is not None:
        try:
            shutil.copytree(suite.root / task.start, work, symlinks=True)
        except (OSError, shutil.Error) as err:
            raise StartError(f"cannot copy {task.start}: {err}") from None
        return
    assert task.repo is not None
    remote = "://" in task.repo or task.repo.startswith("git@")
    source = task.repo if remote else (suite.root / task.repo).as_uri()
    revision = task.commit or "HEAD"
    if not remote:  # a short hash is found in a local repository only
        revision = _git(
            ["rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}"], suite.root / task.repo, env
        )
    work.mkdir()
    _git(["init", "--quiet"], work, env)
    _git(["fetch", "--quiet", "--depth", "1", "--no-tags", "--", source, revision], work, env)
    _git(["checkout", "--quiet", "-B", "main", "FETCH_HEAD"], work, env)


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """git's output; StartError with its last line when it fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**env, "GIT_TERMINAL_PROMPT": "0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise StartError(f"git {args[0]} failed: {err}") from None
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise StartError(f"git {args[0]} failed: {said[-1].strip() if said else f'exit {done.returncode}'}")
    return done.stdout.strip()


def snapshot(work: Path) -> Snapshot:
    """Every regular file and symlink under `work` but the SKIPPED folders, by relative path."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(work):
        dirs[:] = [name for name in dirs if name not in SKIPPED and not os.path.islink(os.path.join(folder, name))]
        links = [name for name in os.listdir(folder) if os.path.islink(os.path.join(folder, name))]
        for name in {*files, *links}:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            digest = None
            if os.path.islink(path):
                digest = "link:" + os.readlink(path)
            elif info.st_size <= HASHED_BYTES:
                digest = _digest(path)
            found[os.path.relpath(path, work)] = FileState(info.st_size, info.st_mtime_ns, digest)
    return found


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def changed_files(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    """The paths created, deleted or changed between two snapshots, sorted."""
    changed = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is None or new is None:
            changed.append(path)
        elif old.digest is not None and new.digest is not None:
            if old.digest != new.digest:
                changed.append(path)
        elif (old.size, old.mtime_ns) != (new.size, new.mtime_ns):
            changed.append(path)
    return tuple(changed)


def copy_hidden(hidden: Path, work: Path) -> None:
    """The hidden check's files over the result (its folders merged, its files replacing the agent's). A
    symlink the agent left where a hidden file goes is removed first, so the copy never writes through it."""
    for folder, dirs, files in os.walk(hidden):
        relative = os.path.relpath(folder, hidden)
        target = work / relative if relative != "." else work
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            target.unlink()
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            destination = target / name
            if destination.is_symlink() or destination.is_dir():
                if destination.is_dir() and not destination.is_symlink():
                    shutil.rmtree(destination)
                else:
                    destination.unlink()
            shutil.copy2(os.path.join(folder, name), destination, follow_symlinks=False)
        dirs[:] = sorted(dirs)
