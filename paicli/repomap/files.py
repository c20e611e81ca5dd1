"""Which files the map may name, and reading one of them safely.

The list comes from a lister passed in (`Lister`: the workspace → its files, workspace-relative posix
paths). Until paicli has its one workspace file lister, `git_files` is that seam's default: git's own
view (`git ls-files --cached --others --exclude-standard`, so no ignored path), run with paicli's
neutralised git environment; outside a git repository, or without git, a walk of the workspace with the
junk folders left out.

`read_source` never follows a symlink anywhere below the workspace (a link out of it is not read, nor
one inside: the file it names is listed on its own), reads at most `MAX_SOURCE_BYTES`, and returns None
for anything it cannot or should not read (gone since the listing, special, too large, binary, minified).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from paicli.common.errors import ConfigError
from paicli.repomap.tags import MAX_SOURCE_BYTES, readable_source
from paicli.tools.confined import read_below
from paicli.tools.git_env import git_safety_environment, program_outside, read_git_config
from paicli.tools.workspace_walk import walk

Lister = Callable[[Path], list[str]]
MAX_FILES = 50_000  # files beyond this are left out of the map (the first ones in sorted order stay)
GIT_TIMEOUT = 20.0


def git_files(workspace: Path) -> list[str]:
    """The workspace's files as git sees them (tracked and untracked, never ignored), sorted; a walk of
    the workspace when it is not in a git repository or there is no git."""
    listed = _git_listing(workspace)
    if listed is None:
        listed = [entry.relative for entry in walk(workspace, workspace, max_entries=MAX_FILES * 2) if not entry.is_dir]
    return sorted(set(listed))[:MAX_FILES]


def git_command(workspace: Path, *args: str, timeout: float = GIT_TIMEOUT) -> bytes | None:
    """The output of `git ARGS` run in the workspace with the neutralised environment; None on any failure."""
    env = dict(os.environ)
    git = program_outside("git", workspace, env.get("PATH", ""))
    if git is None:
        return None
    env.update(git_safety_environment(env, read_git_config(workspace, env)))
    try:
        done = subprocess.run(
            [git, *args],
            cwd=workspace,
            env=env,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_listing(workspace: Path) -> list[str] | None:
    output = git_command(workspace, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    if output is None:
        return None
    return [name.decode("utf-8", errors="surrogateescape") for name in output.split(b"\0") if name]


def read_source(workspace: Path, relative: str) -> str | None:
    """The text of a listed file (see the module's docstring), None when it is not to be read."""
    parts = relative.split("/")
    if not relative or any(part in ("", ".", "..") for part in parts):
        return None
    try:
        data = read_below(workspace, parts, limit=MAX_SOURCE_BYTES)
    except (OSError, ConfigError):
        return None
    return readable_source(data)
