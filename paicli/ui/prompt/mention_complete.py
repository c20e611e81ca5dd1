"""Tab completion of workspace paths after `@` in the REPL prompt (fuzzy, .gitignore respected).

The candidates are the model's view of the workspace (paicli/tools/file_lister.py: what git shows, minus
`.paicliignore`; outside git the same rules read by paicli), and their folders. git runs with the
neutralised environment of paicli/tools/git_env.py, so a repository's config cannot make it run a program.
The list is kept for a few seconds, so typing does not run git at every key.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from paicli.tools.file_lister import list_files

MAX_CANDIDATES = 20_000
MAX_SHOWN = 50
REFRESH_SECONDS = 5.0
_AT_WORD = re.compile(r"(?:(?<=\s)|^)@([^\s@]*)\Z")


def workspace_paths(workspace: Path) -> list[str]:
    """Relative paths worth mentioning: files, and folders ending with `/`."""
    files = list(list_files(workspace).files[:MAX_CANDIDATES])
    folders: set[str] = set()
    for name in files:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folders.add("/".join(parts[:depth]) + "/")
    return sorted(folders) + files


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
