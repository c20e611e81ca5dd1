"""Git-controlled paths in the gate: what the user's own git reads and runs programs from (a nested
repository, a submodule's git directory, the `core.hooksPath` folder, an `include.path` target,
`.gitmodules`, `.gitattributes` where a driver is configured; paicli/sandbox/gitdirs.py).

A file tool's write there asks in every approval mode, yolo included, and is refused where nobody can
be asked (auto, headless): it is the one change that runs code on the host later, outside any sandbox.
A plan task that names the path in its `files` may write it. (A `.git` folder itself is refused
outright by the workspace guard.) A sandboxed command that made such a path (`git init`) keeps it only
when the user says so in `ask` mode (paicli/tools/git_added.py removes it otherwise).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from paicli.sandbox.folders import Folders
from paicli.sandbox.gitdirs import GitPaths, declares, find_git_paths, walk_folders
from paicli.tools.base import Effect, Tool, ToolFailure
from paicli.tools.guard import resolve_in_workspace
from paicli.tools.task_scope import TaskScope

ALWAYS_NAMES = frozenset({".gitmodules"})
DRIVER_NAMES = frozenset({".gitattributes"})


class GitPathsMemo:
    """`find_git_paths` of one workspace for the gate, walked again only when something may have changed
    it: after `forget()` (the gate calls it for every command, MCP call and write to a git-controlled
    path, the only routes by which paicli changes what git reads) or `ttl` seconds after the last walk
    (what the user does meanwhile), or ten times as long as the walk took when that is longer, so walking
    never takes more than a tenth of the time. A walk scans every folder (0.2-0.5 s at 10,000 entries);
    a run of plain file writes, in parallel tasks too, needs one."""

    def __init__(
        self,
        workspace: Path,
        *,
        ttl: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        folders: Folders | None = None,
    ) -> None:
        self.root = Path(os.path.realpath(workspace))
        self.folders = folders if folders is not None else walk_folders()  # the session's, or its own
        self.ttl = ttl
        self.clock = clock
        self._found: GitPaths | None = None
        self._when = 0.0
        self._fresh_for = ttl
        self.walks = 0

    def __call__(self) -> GitPaths:
        now = self.clock()
        if self._found is None or now - self._when >= self._fresh_for:
            self._found = find_git_paths(self.root, folders=self.folders)
            self._when = self.clock()
            self._fresh_for = max(self.ttl, 10 * (self._when - now))
            self.walks += 1
        return self._found

    def forget(self) -> None:
        self._found = None


def is_file_write(tool: Tool | None) -> bool:
    return tool is not None and tool.effect is Effect.WRITE and tool.confined and tool.path_argument is not None


def git_write_reason(
    tool: Tool | None,
    arguments: Mapping[str, Any],
    workspace: Path,
    scope: TaskScope | None,
    git_paths: Callable[[], GitPaths] | None = None,
) -> str | None:
    """Why a file tool's write lands on a git-controlled path its plan task did not name; None otherwise.
    `git_paths` gives the workspace's git-controlled paths (walked afresh when not given)."""
    if tool is None or not is_file_write(tool) or tool.path_argument is None:
        return None
    raw = arguments.get(tool.path_argument)
    if not isinstance(raw, str):
        return None
    try:
        target = resolve_in_workspace(workspace, raw, for_write=True)
    except ToolFailure:
        return None  # the guard refuses it with its own message
    root = Path(os.path.realpath(workspace))
    found = git_paths() if git_paths is not None else find_git_paths(root)
    hit = next((path for path in found.paths if target == path or target.is_relative_to(path)), None)
    if hit is None and (target.name in ALWAYS_NAMES or (found.drivers and target.name in DRIVER_NAMES)):
        hit = target
    if hit is None:
        return None
    if scope is not None and scope.writable is not None and declares(root, scope.writable, hit):
        return None
    shown = hit.relative_to(root).as_posix()
    return f"{shown} is read by git (hooks, config or attributes): a change there can make your own git run a program"


def keep_reason(paths: list[str]) -> str:
    return f"the command made {', '.join(paths)}, which your own git would read and run programs from; keep it?"
