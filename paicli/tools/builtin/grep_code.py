"""grep_code: lines matching a Python regular expression in the text files under a path.

Pure Python (`re`), no rg or grep: results are the same everywhere. Binary files (a NUL byte in the
first 8 KB), very large files and junk folders are skipped.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.beneath import open_regular
from paicli.tools.guard import display_path, resolve_in_workspace
from paicli.tools.workspace_walk import glob_to_regex, walk

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_SCANNED = 200_000
SNIFF_BYTES = 8192


class GrepCodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="Python regular expression searched in each line, e.g. `def \\w+_test`. "
        "Prefix `(?i)` to ignore case."
    )
    path: str = Field(
        default=".", description="File or folder to search, relative to the workspace. Default: the workspace."
    )
    glob: str | None = Field(
        default=None,
        description="Only search files whose name matches this glob, e.g. `*.py` (a pattern with `/` "
        "is matched against the path relative to `path`).",
    )


class GrepCode(Tool):
    name = "grep_code"
    description = (
        "Search text files for a regular expression (Python `re` syntax). Returns `path:line: text` "
        "for each matching line, sorted by path. Skips binary files and dependency or cache folders."
    )
    Args = GrepCodeArgs
    effect = Effect.READ
    confined = True
    path_argument = "path"
    summary_argument = "pattern"
    untrusted_output = True

    async def run(self, args: GrepCodeArgs, ctx: ToolContext) -> str:
        try:
            regex = re.compile(args.pattern)
        except re.error as error:
            raise ToolFailure(f"invalid regular expression {args.pattern!r}: {error}") from None
        base = resolve_in_workspace(ctx.workspace, args.path, for_write=False)
        if not base.exists():
            raise ToolFailure(f"not found: {display_path(ctx.workspace, base)}")
        return await asyncio.to_thread(_grep, regex, base, ctx.workspace, args.glob)


def _grep(regex: re.Pattern[str], base: Path, workspace: Path, name_glob: str | None) -> str:
    if base.is_file():
        files = [base]
    else:
        wanted = _name_filter(name_glob)
        files = [
            entry.path
            for entry in walk(base, workspace, max_entries=MAX_SCANNED)
            if not entry.is_dir and wanted(entry.relative)
        ]
    results: list[str] = []
    more = 0
    skipped_large = 0
    for path in files:
        try:
            # Opened by walking below the workspace again (beneath.py): a folder swapped for a symlink
            # since the walk cannot make this read a file outside. FIFOs and devices are refused.
            with os.fdopen(open_regular(workspace, path), "rb") as handle:
                if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                    skipped_large += 1
                    continue
                data = handle.read()
        except (OSError, ToolFailure):
            continue
        if b"\x00" in data[:SNIFF_BYTES]:
            continue
        shown = display_path(workspace, path)
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if regex.search(line):
                if len(results) >= MAX_MATCHES:
                    more += 1
                    continue
                results.append(f"{shown}:{number}: {_clip(line)}")
    if not results:
        return f"no matches for {regex.pattern!r} in {display_path(workspace, base)}"
    if more:
        results.append(f"... {more} more matches not shown; narrow the pattern, path or glob")
    if skipped_large:
        results.append(f"({skipped_large} files larger than {MAX_FILE_BYTES} bytes were not searched)")
    return "\n".join(results)


def _name_filter(name_glob: str | None) -> Callable[[str], bool]:
    if not name_glob:
        return lambda relative: True
    if "/" in name_glob:
        matcher = glob_to_regex(name_glob.removeprefix("./"))
        return lambda relative: bool(matcher.fullmatch(relative))
    return lambda relative: fnmatchcase(relative.rsplit("/", 1)[-1], name_glob)


def _clip(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ..."
