"""list_dir: the entries of one folder, sorted by name, folders marked with a trailing `/`, and what the
model's view of the workspace leaves out (.gitignore, .paicliignore: paicli/tools/file_lister.py) marked
` (ignored)` rather than hidden: the model may still read such a file by its path."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.file_lister import ignored_entries
from paicli.tools.guard import display_path, resolve_in_workspace

MAX_ENTRIES = 1000
IGNORED = " (ignored)"


class ListDirArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Folder path, relative to the workspace. Default: the workspace.")


class ListDir(Tool):
    name = "list_dir"
    description = (
        "List the entries of one folder (not recursive), sorted by name. Folders end with `/`; symbolic "
        "links show their target as `name -> target`. Entries ignored by .gitignore or .paicliignore end with "
        "`(ignored)`. Use glob_files to find files deeper down."
    )
    Args = ListDirArgs
    effect = Effect.READ
    confined = True
    path_argument = summary_argument = "path"

    async def run(self, args: ListDirArgs, ctx: ToolContext) -> str:
        path = resolve_in_workspace(ctx.workspace, args.path, for_write=False)
        shown = display_path(ctx.workspace, path)
        return await asyncio.to_thread(_list, path, shown, ctx.workspace)


def _list(path: Path, shown: str, workspace: Path) -> str:
    try:
        with os.scandir(path) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except FileNotFoundError:
        raise ToolFailure(f"folder not found: {shown}") from None
    except NotADirectoryError:
        raise ToolFailure(f"{shown} is a file, not a folder; use read_file to read it") from None
    except OSError as error:
        raise ToolFailure(f"cannot list {shown}: {error.strerror or error}") from None
    if not entries:
        return f"({shown} is empty)"
    listed = entries[:MAX_ENTRIES]
    folder = os.path.relpath(os.path.realpath(path), os.path.realpath(workspace)).replace(os.sep, "/")
    ignored = ignored_entries(workspace, "" if folder == "." else folder, [(e.name, _is_folder(e)) for e in listed])
    lines = [_describe(entry) + (IGNORED if entry.name in ignored else "") for entry in listed]
    if len(entries) > MAX_ENTRIES:
        lines.append(f"... and {len(entries) - MAX_ENTRIES} more entries (showing the first {MAX_ENTRIES})")
    return "\n".join(lines)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _describe(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            target = os.readlink(entry.path)
            suffix = "/" if entry.is_dir() else ""
            return f"{entry.name}{suffix} -> {target}"
        return entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
    except OSError:
        return entry.name
