"""The plan contract for tools that act outside paicli's view (MCP tools that are not read-only).

Such a tool runs in its own server, out of the sandbox's reach, so a task's `files` bind it only where
paicli can see what it touches: the workspace paths named in its arguments. Then each of them must be
declared by the task, as for its commands in the sandbox (a COMMAND task declaring `./`, or a FILE_WRITE
task of a plan from before contracts, may write anywhere; a COMMAND or VERIFICATION task without `files`,
and FILE_READ and ANALYSIS tasks, change nothing). Where no argument names a workspace path, paicli cannot
tell what it would change, so it runs only in a COMMAND task. The gate applies this to a model's calls
(paicli/policy/scope.py), the plan contract to a task's `action` before the plan runs (`outside_write_set`).

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
    named = outside_write_set(scope, arguments, workspace)
    if named is None:
        return None
    what = f"out of scope: {scope.describe()}"
    if named == NAMES_NO_PATH:
        return (
            f"{what}; this tool acts outside paicli's view and names no workspace path, so what it would change "
            f"cannot be checked. {ADVICE}"
        )
    return f"{what}; {named} is not among the paths it may change. {ADVICE}"


NAMES_NO_PATH = ""


def outside_write_set(scope: TaskScope, arguments: Mapping[str, Any], workspace: Path) -> str | None:
    """The one rule, for the gate (a model's call) and the plan contract (a task's `action`): None when the
    call keeps to the task's scope; NAMES_NO_PATH when it names no workspace path and the task is not a
    COMMAND task; else the first path it names (as written) that the task may not change."""
    root = Path(os.path.realpath(workspace))
    named = list(workspace_paths(arguments, root))
    if not named:
        return None if scope.kind == "COMMAND" else NAMES_NO_PATH
    if scope.writable is None and scope.kind in ("FILE_WRITE", "COMMAND"):
        return None  # writes anywhere
    for raw, target in named:
        if scope.writable is None or not _declared(root, target, scope.writable):
            return raw
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
