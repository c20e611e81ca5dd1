"""glob_files: paths under a folder that match a glob pattern, sorted, relative to the workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.guard import display_path, resolve_in_workspace
from paicli.tools.workspace_walk import JUNK_FOLDERS, glob_to_regex, walk

MAX_RESULTS = 1000
MAX_SCANNED = 200_000  # entries visited before the walk gives up (a runaway tree must not hang a turn)


class GlobFilesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="Glob pattern relative to `path`: `*` and `?` match within one folder, `**` any "
        "number of folders. Examples: `**/*.py`, `src/*.ts`, `tests/**/test_*.py`."
    )
    path: str = Field(
        default=".", description="Folder to search from, relative to the workspace. Default: the workspace."
    )


class GlobFiles(Tool):
    name = "glob_files"
    description = (
        "Find files and folders whose path matches a glob pattern. `*.py` matches only directly in "
        "`path`; use `**/*.py` to search all subfolders. Results are sorted, relative to the workspace "
        "(folders end with `/`). Skips " + ", ".join(sorted(JUNK_FOLDERS)) + "."
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
        return await asyncio.to_thread(_glob, base, ctx.workspace, pattern.removeprefix("./"))


def _glob(base: Path, workspace: Path, pattern: str) -> str:
    matcher = glob_to_regex(pattern)
    matches: list[str] = []
    scanned = 0
    for entry in walk(base, workspace, max_entries=MAX_SCANNED):
        scanned += 1
        if matcher.fullmatch(entry.relative):
            matches.append(display_path(workspace, entry.path) + ("/" if entry.is_dir else ""))
    if not matches:
        return f"no paths match {pattern} under {display_path(workspace, base)}"
    lines = matches[:MAX_RESULTS]
    if len(matches) > MAX_RESULTS:
        lines.append(f"... {len(matches) - MAX_RESULTS} more matches not shown; narrow the pattern or path")
    if scanned >= MAX_SCANNED:
        lines.append(f"... stopped after visiting {MAX_SCANNED} entries; narrow the path")
    return "\n".join(lines)
