"""The workspace guard: every path a tool touches must resolve inside the workspace.

Paths are resolved the way the kernel will follow them (symlinks of the path itself, or of its nearest
existing ancestor for a file that does not exist yet) and compared component-wise with
`Path.is_relative_to` against the resolved workspace, never as string prefixes. Nothing is expanded:
`~` and `$HOME` are refused, not interpreted.

This is a check at one moment, for a clear refusal before anything happens. The file tools then act
through beneath.py, which walks the path again without letting the kernel follow any symlink, so a
folder swapped for a symlink in between cannot take a read or a write outside.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from paicli.tools.base import ToolFailure
from paicli.tools.shims import workspace_program_folders

# Writes below these folders are refused even inside the workspace (git internals; paicli's own config
# and plans). Compared case-insensitively so a case-insensitive filesystem cannot be used to sneak by.
PROTECTED_FOLDERS = (".git", ".paicli")

_ENV_VARIABLE = re.compile(r"\$(\{)?[A-Za-z_]")
_FALLBACK_NAME_MAX = 255
_FALLBACK_PATH_MAX = 4096


def resolve_in_workspace(workspace: Path, raw: str, *, for_write: bool) -> Path:
    """Resolve `raw` (relative to `workspace`, or absolute inside it) to a real path inside the workspace.

    Raises ToolFailure with a one-line reason when the path is empty, malformed, outside the workspace
    (also through a symlink, dangling or not), too long, or, for writes, protected.
    """
    return WorkspacePaths(workspace).resolve(raw, for_write=for_write)


class WorkspacePaths:
    """The guard for many paths at once (a plan's declared files): the workspace, its limits and the
    folders on PATH looked up once, each folder of a path resolved once."""

    def __init__(self, workspace: Path) -> None:
        self.root = Path(os.path.realpath(workspace))
        self._root = str(self.root)
        self._folders: dict[str, str] = {}
        self.verdicts: dict[str, str] = {}  # a caller's findings per path, kept for the paths' next mention

    @functools.cached_property
    def limits(self) -> tuple[int, int]:
        try:
            return os.pathconf(self.root, "PC_NAME_MAX"), os.pathconf(self.root, "PC_PATH_MAX")
        except (OSError, ValueError):
            return _FALLBACK_NAME_MAX, _FALLBACK_PATH_MAX

    @functools.cached_property
    def program_folders(self) -> list[Path]:
        return workspace_program_folders(self.root)

    def resolve(self, raw: str, *, for_write: bool) -> Path:
        """`resolve_in_workspace` of this workspace."""
        _refuse_malformed(raw)
        candidate = raw if os.path.isabs(raw) else os.path.join(self._root, raw)
        _refuse_too_long(candidate, raw, *self.limits)
        # realpath follows every symlink that exists (dangling ones too: their target is what a write would
        # create) and handles `..` after resolving what precedes it, as the kernel does.
        try:
            resolved = self._realpath(candidate)
        except OSError as error:
            raise ToolFailure(f"refused: cannot resolve {raw}: {error.strerror or error}") from None
        # Compared component-wise: the root itself, or below it after a separator (never a string prefix).
        if resolved != self._root and not resolved.startswith(self._root.rstrip(os.sep) + os.sep):
            raise ToolFailure(f"refused: {raw} is outside the workspace ({self.root})")
        if for_write:
            _refuse_protected(self.root, resolved, self.program_folders)
        return Path(resolved)

    def _realpath(self, candidate: str) -> str:
        """os.path.realpath(candidate), the folder part looked up once for all paths in it."""
        folder, leaf = os.path.split(candidate)
        if leaf in ("", ".", ".."):
            return os.path.realpath(candidate)
        real_folder = self._folders.get(folder)
        if real_folder is None:
            real_folder = self._folders[folder] = os.path.realpath(folder)
        joined = os.path.join(real_folder, leaf)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


def display_path(workspace: Path, path: Path) -> str:
    """How a resolved path is shown to the model: relative to the workspace, `.` for the root itself."""
    root = Path(os.path.realpath(workspace))
    try:
        relative = path.relative_to(root)
    except ValueError:
        return str(path)
    return relative.as_posix() if relative.parts else "."


def _refuse_malformed(raw: str) -> None:
    if not raw or not raw.strip():
        raise ToolFailure("refused: the path is empty")
    if "\x00" in raw:
        raise ToolFailure("refused: the path contains a NUL byte")
    if raw.startswith("~"):
        raise ToolFailure(
            f"refused: {raw} starts with '~'; home folders are not expanded, use a path relative to the workspace"
        )
    if _ENV_VARIABLE.search(raw):
        raise ToolFailure(
            f"refused: {raw} contains an environment variable; variables are not expanded, "
            "use a path relative to the workspace"
        )


def _refuse_too_long(candidate: str, raw: str, name_max: int, path_max: int) -> None:
    for part in candidate.split(os.sep):
        if len(os.fsencode(part)) > name_max:
            shown = part if len(part) <= 40 else part[:40] + "..."
            raise ToolFailure(
                f"refused: the name {shown!r} is {len(part)} characters long; "
                f"this filesystem allows at most {name_max} bytes per name"
            )
    if len(os.fsencode(candidate)) >= path_max:
        raise ToolFailure(f"refused: the path {raw[:40]!r}... is longer than this filesystem allows")


_PROTECTED = frozenset(name.casefold() for name in PROTECTED_FOLDERS)


def _refuse_protected(root: Path, resolved: str, program_folders: list[Path]) -> None:
    relative = os.path.relpath(resolved, root).replace(os.sep, "/") if resolved != str(root) else "."
    if any(part.casefold() in _PROTECTED for part in relative.split("/")):
        raise ToolFailure(f"refused: {relative} is protected")
    shown = resolved.casefold()
    for folder in program_folders:
        if shown == str(folder).casefold() or shown.startswith(str(folder).casefold() + os.sep):
            raise ToolFailure(
                f"refused: {relative} is in {display_path(root, folder)}, a folder on the PATH commands "
                "run with: a file written there could run in place of a program (use a command, which is approved)"
            )
