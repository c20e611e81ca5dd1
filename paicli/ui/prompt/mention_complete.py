"""Tab completion of workspace paths after `@` in the REPL prompt (fuzzy, .gitignore respected).

In a git repository the candidates are what git tracks plus untracked files it does not ignore
(`git ls-files --cached --others --exclude-standard`), and their folders; elsewhere a bounded walk
of the workspace without the junk folders (paicli/tools/workspace_walk.py). git runs with the environment of
commands (paicli/tools/git_env.py), so a repository's config cannot make it run a program. The list
is kept for a few seconds, so typing does not run git at every key.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from paicli.tools.builtin.execute_command import child_environment
from paicli.tools.workspace_walk import walk

MAX_CANDIDATES = 20_000
MAX_SHOWN = 50
REFRESH_SECONDS = 5.0
_AT_WORD = re.compile(r"(?:(?<=\s)|^)@([^\s@]*)\Z")


def workspace_paths(workspace: Path) -> list[str]:
    """Relative paths worth mentioning: files, and folders ending with `/`."""
    files = _git_files(workspace)
    if files is None:
        return [e.relative + ("/" if e.is_dir else "") for e in walk(workspace, workspace, max_entries=MAX_CANDIDATES)]
    folders: set[str] = set()
    for name in files:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folders.add("/".join(parts[:depth]) + "/")
    return sorted(folders) + files


def _git_files(workspace: Path) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=workspace,
            capture_output=True,
            timeout=5,
            check=False,
            stdin=subprocess.DEVNULL,
            env=child_environment(workspace),  # the repository's git config cannot run programs
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None  # not a repository (or git is unhappy): walk instead
    names = [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]
    return sorted(names)[:MAX_CANDIDATES]


def fuzzy_rank(typed: str, candidate: str) -> int | None:
    """None when `typed` is not a subsequence of `candidate` (case-insensitive); lower ranks come first:
    a prefix, then a substring of the name, then a scattered match."""
    lowered, wanted = candidate.lower(), typed.lower()
    if lowered.startswith(wanted):
        return 0
    if wanted in lowered.rsplit("/", 2)[-1] or wanted in lowered:
        return 1
    position = 0
    for char in wanted:
        position = lowered.find(char, position) + 1
        if position == 0:
            return None
    return 2


class MentionCompleter(Completer):
    """Completes the word after `@` with a workspace path."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._paths: list[str] = []
        self._loaded_at = float("-inf")

    def paths(self) -> list[str]:
        now = time.monotonic()
        if now - self._loaded_at > REFRESH_SECONDS:
            self._paths = workspace_paths(self.workspace)
            self._loaded_at = now
        return self._paths

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        match = _AT_WORD.search(document.text_before_cursor)
        if match is None:
            return
        typed = match.group(1)
        ranked = [(rank, len(path), path) for path in self.paths() if (rank := fuzzy_rank(typed, path)) is not None]
        for _, _, path in sorted(ranked)[:MAX_SHOWN]:
            yield Completion(path, start_position=-len(typed), display=path)
