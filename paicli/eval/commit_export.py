"""The git side of `paicli eval from-commits`: reading a repository's commits, and writing a task's
starting state and hidden files out of them.

The starting state is a new repository (`git init` without templates, one commit by a fixed author at a
fixed date) holding the files of a commit's parent: no history, ref, object store, hook, alternate or
configuration of the original reaches it, so an agent in it cannot `git log` or `git show` its way to the
answer. Git runs without the caller's GIT_DIR-like variables (an inherited GIT_ALTERNATE_OBJECT_DIRECTORIES
would otherwise lend the new repository the original's objects)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# variables that would point git somewhere else than the repository named on the command line
_GIT_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)
_QUIET_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false")
START_AUTHOR = {
    "GIT_AUTHOR_NAME": "paicli eval",
    "GIT_AUTHOR_EMAIL": "eval@paicli.invalid",
    "GIT_COMMITTER_NAME": "paicli eval",
    "GIT_COMMITTER_EMAIL": "eval@paicli.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
REGULAR_MODES = {"100644": 0o644, "100755": 0o755}


class GitError(Exception):
    """A git command failed; the message is one line for the user."""


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARIABLES}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(extra or {})})
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    done = subprocess.run(
        ["git", *_QUIET_GIT, "-C", str(repo), *args],
        capture_output=True,
        env=env or git_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {reason[-1] if reason else f'exit {done.returncode}'}")
    return done.stdout


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, T (renames are seen as a deletion and an addition)
    path: str


def changes(repo: Path, parent: str, commit: str) -> list[Change]:
    raw = git(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--name-status", parent, commit)
    fields = raw.decode("utf-8", errors="surrogateescape").split("\0")
    return [Change(status=fields[i][:1], path=fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


def safe_relative(path: str) -> PurePosixPath:
    """A path from a git tree, refused when it could land outside the folder it is written into."""
    relative = PurePosixPath(path)
    if relative.is_absolute() or not relative.parts or any(p in ("", ".", "..", ".git") for p in relative.parts):
        raise GitError(f"refusing the path {path!r} from the repository")
    return relative


def write_start(repo: Path, parent: str, dest: Path) -> None:
    """`dest` (new) becomes a one-commit repository holding the files of `parent`."""
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="paicli-eval-index-") as scratch:
        # the parent's tree through a throwaway index: the original's own index and work tree are not touched
        indexed = git_env({"GIT_INDEX_FILE": str(Path(scratch) / "index")})
        git(repo, "read-tree", parent, env=indexed)
        git(repo, "checkout-index", "-a", "-f", f"--prefix={dest.resolve()}/", env=indexed)
    git(dest, "init", "-q", "--template=", "--initial-branch=main")
    git(dest, "add", "-A", "-f")
    git(dest, "commit", "-q", "--no-verify", "--allow-empty", "-m", "starting state", env=git_env(START_AUTHOR))


def write_hidden(repo: Path, commit: str, paths: list[str], dest: Path) -> list[str]:
    """The commit's versions of `paths` (regular files only) under `dest`; returns the paths written."""
    wanted = set(paths)
    written: list[str] = []
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    for entry in listing.decode("utf-8", errors="surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, kind, oid = meta.split()
        if path not in wanted or kind != "blob" or mode not in REGULAR_MODES:
            continue
        target = dest.joinpath(*safe_relative(path).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as handle:
            handle.write(git(repo, "cat-file", "blob", oid))
        target.chmod(REGULAR_MODES[mode])
        written.append(path)
    return sorted(written)
