"""Walking the workspace for glob_files and grep_code: sorted, junk folders pruned, never outside.

Symlinked folders are not descended (a link loop or a link out cannot blow up the walk); a symlinked
file is yielded only when it resolves inside the workspace.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Folders no one wants in search results: version control internals, dependencies, caches.
JUNK_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)


@dataclass(frozen=True)
class Entry:
    path: Path  # absolute, inside the workspace
    relative: str  # posix path relative to the walk's base folder
    is_dir: bool


def walk(base: Path, workspace: Path, *, max_entries: int) -> Iterator[Entry]:
    """Entries under `base` (not `base` itself) in sorted order, depth first, at most `max_entries`.

    Junk folders below `base` are skipped (`base` itself may be one, if the caller asked for it).
    """
    root = Path(os.path.realpath(workspace))
    seen = 0
    stack: list[tuple[Path, str]] = [(base, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as scan:
                items = sorted(scan, key=lambda item: item.name)
        except OSError:
            continue
        subfolders: list[tuple[Path, str]] = []
        for item in items:
            if seen >= max_entries:
                return
            relative = f"{prefix}{item.name}"
            path = Path(item.path)
            try:
                is_link = item.is_symlink()
                is_dir = item.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_link and not Path(os.path.realpath(path)).is_relative_to(root):
                continue
            if is_dir and item.name in JUNK_FOLDERS:
                continue
            seen += 1
            yield Entry(path=path, relative=relative, is_dir=is_dir or (is_link and path.is_dir()))
            if is_dir:
                subfolders.append((path, relative + "/"))
        # Reversed so the stack pops them in sorted order.
        stack.extend(reversed(subfolders))


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob (`*`, `?`, `[...]`, `**` for any number of folders) to a full-match regex."""
    parts: list[str] = []
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        parts.append(_segment_regex(segment) + ("" if last else "/"))
    return re.compile("".join(parts), re.DOTALL)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
