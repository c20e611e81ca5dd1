"""The plan contract for tools that act outside paicli's view (MCP tools that are not read-only).

Such a tool runs in its own server, out of the sandbox's reach, so a task's `files` bind it only where
paicli can see what it touches: the workspace paths named in its arguments. Then each of them must be
declared by the task (a FILE_WRITE or COMMAND task without `files` may write anywhere; FILE_READ,
ANALYSIS and VERIFICATION tasks change nothing). Where no argument names a workspace path, paicli cannot
tell what it would change, so it runs only in a COMMAND task.

What counts as naming a path (`workspace_paths`): a `file://` URI, an absolute path, the value of an
argument whose name says path, file, dir, folder, target, destination or uri, or a relative path that
exists in the workspace, each resolved (symlinks followed) and kept when it lies inside the workspace.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from paicli.tools.task_scope import TaskScope

PATH_NAMES = re.compile(r"path|file|dir|folder|target|dest|uri|location", re.IGNORECASE)
URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
MAX_STRINGS = 500  # arguments looked at, at most (the rest of a huge call is not examined)
MAX_DEPTH = 16
MAX_PATH = 4096
ADVICE = "Say in your answer what must change; the plan will take care of it."


def external_out_of_scope(scope: TaskScope, arguments: Mapping[str, Any], workspace: Path) -> str | None:
    """Why a call of a non-read-only tool outside paicli's view is outside the task's scope, or None."""
    root = Path(os.path.realpath(workspace))
    named = list(workspace_paths(arguments, root))
    what = f"out of scope: {scope.describe()}"
    if not named:
        if scope.kind == "COMMAND":
            return None
        return (
            f"{what}; this tool acts outside paicli's view and names no workspace path, so what it would change "
            f"cannot be checked. {ADVICE}"
        )
    writes_anywhere = scope.writable is None and scope.kind in ("FILE_WRITE", "COMMAND")
    if writes_anywhere:
        return None
    for raw, target in named:
        if scope.writable is None or not _declared(root, target, scope.writable):
            return f"{what}; {raw} is not among the paths it may change. {ADVICE}"
    return None


def workspace_paths(arguments: Mapping[str, Any], root: Path) -> Iterator[tuple[str, Path]]:
    """(as written, resolved) for each argument that names a path inside `root` (see the module doc)."""
    for key, value in _strings(arguments):
        candidate = _as_path(key, value, root)
        if candidate is None:
            continue
        target = Path(os.path.realpath(root / candidate))
        if target == root or target.is_relative_to(root):
            yield value, target


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """(the name of the argument it is under, the string) for every string in the arguments, bounded."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    seen = 0
    while stack and seen < MAX_STRINGS:
        key, item, depth = stack.pop()
        if isinstance(item, str):
            seen += 1
            yield key, item
        elif depth < MAX_DEPTH and isinstance(item, Mapping):
            stack.extend((str(k), v, depth + 1) for k, v in item.items())
        elif depth < MAX_DEPTH and isinstance(item, list):
            stack.extend((key, v, depth + 1) for v in item)


def _as_path(key: str, value: str, root: Path) -> str | None:
    text = value.strip()
    if not text or len(text) > MAX_PATH or "\n" in text or "\x00" in text:
        return None
    if text.lower().startswith("file://"):
        return unquote(text[7:])
    if URL.match(text):  # another scheme: not a file
        return None
    if os.path.isabs(text) or PATH_NAMES.search(key):
        return text
    if " " not in text and os.path.lexists(root / text):
        return text
    return None


def _declared(root: Path, target: Path, writable: tuple[str, ...]) -> bool:
    """Whether `target` is a declared file or lies below a declared folder (taken as written)."""
    for entry in writable:
        declared = Path(os.path.normpath(root / entry))
        if target == declared or (entry.endswith("/") and target.is_relative_to(declared)):
            return True
    return False
