"""glob_files: paths under a folder that match a glob pattern, sorted, relative to the workspace.

The paths are the model's view of the workspace (paicli/tools/file_lister.py: git's files minus
`.paicliignore`; the session's remembered one while nothing it was made from changed, paicli/tools/
listing_memo.py) and their folders; `include_ignored` looks at every file instead."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.file_lister import all_files, list_files
from paicli.tools.git_listing import SharedGit
from paicli.tools.glob_pattern import glob_to_regex
from paicli.tools.guard import display_path, resolve_in_workspace
from paicli.tools.listing_memo import ListingMemo

MAX_RESULTS = 1000


class GlobFilesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="Glob pattern relative to `path`: `*` and `?` match within one folder, `**` any "
        "number of folders. Examples: `**/*.py`, `src/*.ts`, `tests/**/test_*.py`."
    )
    path: str = Field(
        default=".", description="Folder to search from, relative to the workspace. Default: the workspace."
    )
    include_ignored: bool = Field(
        default=False,
        description="Also find files that .gitignore or .paicliignore leave out (build output, dependencies).",
    )


class GlobFiles(Tool):
    name = "glob_files"
    description = (
        "Find files and folders whose path matches a glob pattern. `*.py` matches only directly in "
        "`path`; use `**/*.py` to search all subfolders. Results are sorted, relative to the workspace "
        "(folders end with `/`). Leaves out what .gitignore and .paicliignore ignore unless `include_ignored`."
    )
    Args = GlobFilesArgs
    effect = Effect.READ
    confined = True
    path_argument = "path"
    summary_argument = "pattern"

    async def run(self, args: GlobFilesArgs, ctx: ToolContext) -> str:
        pattern = args.pattern.strip()
        if not pattern:
            raise ToolFailure("pattern is empty; for example `**/*.py`")
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ToolFailure("pattern must be relative and stay below `path`; choose the folder with `path`")
        base = resolve_in_workspace(ctx.workspace, args.path, for_write=False)
        if not base.is_dir():
            raise ToolFailure(f"{display_path(ctx.workspace, base)} is not a folder")
        glob = pattern.removeprefix("./")
        return await asyncio.to_thread(_glob, base, ctx.workspace, glob, args.include_ignored, ctx.listings)


def _glob(base: Path, workspace: Path, pattern: str, include_ignored: bool, memo: ListingMemo | None) -> str:
    root = Path(os.path.realpath(workspace))
    under = os.path.relpath(os.path.realpath(base), root).replace(os.sep, "/")
    prefix = "" if under == "." else under + "/"
    matcher = glob_to_regex(pattern)
    matches: set[str] = set()
    seen: set[str] = set()  # folders matched already, with every folder above them
    for path in _files(root, include_ignored, memo):
        if not path.startswith(prefix):
            continue
        relative = path[len(prefix) :]
        if matcher.fullmatch(relative):
            matches.add(path)
        folder = relative.rpartition("/")[0]
        while folder and folder not in seen:
            seen.add(folder)
            if matcher.fullmatch(folder):
                matches.add(prefix + folder + "/")
            folder = folder.rpartition("/")[0]
    if not matches:
        return f"no paths match {pattern} under {display_path(workspace, base)}"
    ordered = sorted(matches, key=lambda path: path.rstrip("/"))
    lines = ordered[:MAX_RESULTS]
    if len(ordered) > MAX_RESULTS:
        lines.append(f"... {len(ordered) - MAX_RESULTS} more matches not shown; narrow the pattern or path")
    return "\n".join(lines)


def _files(root: Path, include_ignored: bool, memo: ListingMemo | None) -> Sequence[str]:
    """Every file, or the model's view: the session's remembered one while it holds (as grep_code's)."""
    if include_ignored:
        return all_files(root)
    remembered = memo.view(root, SharedGit(root)) if memo is not None else None
    return remembered.present if remembered is not None else list_files(root).files
