"""Targets whose loss is a disaster: the filesystem root, a home folder, the workspace and its ancestors,
and block devices. Used by the hard denylist (paicli.tools.denylist) on parsed words."""

from __future__ import annotations

import os
import re
from pathlib import Path

from paicli.shell.syntax import Expansion, Literal, Part, Substitution, Word

# Block devices and raw memory: writing to them destroys data below any filesystem.
BLOCK_DEVICE = re.compile(
    r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|mapper/|md|loop|sr|nbd|ram|zram|rbd|pmem|bcache|mtd|ubi|vg|block/"
    r"|root$|mem$|kmem$|port$)"
)
_BARE_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def is_block_device(text: str) -> bool:
    return bool(BLOCK_DEVICE.match(os.path.normpath(text) if text.startswith("/") else text))


def critical(target: Word, workspace: Path | None, *, include_workspace: bool) -> str | None:
    """Why deleting (moving, re-owning) `target` recursively would be a disaster, or None."""
    text = _spelled(target)
    if text is None:
        return None
    core = _strip_trailing(text)
    if core == "/":
        return "the filesystem root"
    if core.startswith("~"):
        return "a home folder" if "/" not in core else None
    if core.startswith("$"):
        variable = _BARE_VARIABLE.fullmatch(core)
        if variable and core != text:
            name = variable.group(1)
            return f"this is / when ${name} is empty; write ${{{name}:?}}/ to fail instead"
        return None
    if core.startswith("/"):
        return _critical_absolute(Path(os.path.normpath(core)), workspace, include_workspace)
    if include_workspace and core in {"*", ".*"}:
        return "everything in the workspace"
    if target.glob and any(c in core for c in "*?["):
        return None
    if workspace is not None:
        return _critical_absolute(Path(os.path.normpath(workspace / core)), workspace, include_workspace)
    parts = set(core.split("/"))
    if parts <= {".", ".."}:
        if ".." in parts:
            return "a folder above the workspace"
        return "the workspace root" if include_workspace else None
    return None


def _spelled(target: Word) -> str | None:
    """The target with `$HOME` as `~`, `$PWD` and `$(pwd)` as `.`, variables elsewhere kept as written.
    None when a substitution other than a leading `$(pwd)` is part of it (nothing to be sure of)."""
    out: list[str] = []
    for index, part in enumerate(target.parts):
        if isinstance(part, Literal):
            out.append(part.text)
        elif isinstance(part, Expansion) and index == 0 and part.name == "HOME":
            out.append("~")
        elif index == 0 and _is_working_folder(part):
            out.append(".")
        elif isinstance(part, Substitution):
            return None
        else:
            out.append(part.source)
    return "".join(out)


def _is_working_folder(part: Part) -> bool:
    """`$PWD` or `$(pwd)`."""
    if isinstance(part, Expansion):
        return part.name == "PWD"
    return isinstance(part, Substitution) and _is_pwd(part)


def _is_pwd(part: Substitution) -> bool:
    pipelines = part.script.pipelines
    if len(pipelines) != 1 or len(pipelines[0].commands) != 1:
        return False
    words = getattr(pipelines[0].commands[0], "words", ())
    return [w.text for w in words] == ["pwd"]


def _critical_absolute(path: Path, workspace: Path | None, include_workspace: bool) -> str | None:
    if len(path.parts) <= 2:
        return "the filesystem root" if len(path.parts) <= 1 else f"the top-level folder {path}"
    if path == Path(os.path.expanduser("~")):
        return "a home folder"
    if workspace is not None:
        if path == workspace and include_workspace:
            return "the workspace root"
        if path != workspace and workspace.is_relative_to(path):
            return "a folder that contains the workspace"
    return None


def _strip_trailing(target: str) -> str:
    core = target
    while core != "/":
        for suffix in ("/*", "/.", "/"):
            if core.endswith(suffix):
                core = core[: -len(suffix)] or "/"
                break
        else:
            break
    return core
