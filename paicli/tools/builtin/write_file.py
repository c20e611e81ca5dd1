"""write_file: create or replace a whole file, atomically, under the path's lock."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.atomic import atomic_write
from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.beneath import open_regular, stat_entry
from paicli.tools.diff import Changed, file_diff
from paicli.tools.guard import display_path, resolve_in_workspace

MAX_WRITE_BYTES = 5 * 1024 * 1024


class WriteFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="File path, relative to the workspace. Missing folders are created.")
    content: str = Field(description="The complete new content of the file (UTF-8 text).")


class WriteFile(Tool):
    name = "write_file"
    description = (
        "Create a file or replace its whole content. Missing folders are created. The write is atomic. "
        "To change part of an existing file, prefer edit_file."
    )
    Args = WriteFileArgs
    effect = Effect.WRITE
    confined = True
    path_argument = summary_argument = "path"

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> str:
        path = resolve_in_workspace(ctx.workspace, args.path, for_write=True)
        shown = display_path(ctx.workspace, path)
        try:
            data = args.content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ToolFailure(f"content is not valid Unicode text (position {error.start})") from None
        if len(data) > MAX_WRITE_BYTES:
            raise ToolFailure(f"content is {len(data)} bytes; write_file accepts at most {MAX_WRITE_BYTES} bytes")
        async with ctx.locks.lock(path):
            try:
                existing = stat_entry(ctx.workspace, path)
            except OSError as error:
                raise ToolFailure(f"cannot write {shown}: {error.strerror or error}") from None
            if existing is not None and stat.S_ISDIR(existing.st_mode):
                raise ToolFailure(f"{shown} is a folder; choose a file path")
            if existing is not None and not stat.S_ISREG(existing.st_mode):
                raise ToolFailure(f"{shown} is not a regular file; refusing to replace it")
            existed = existing is not None
            before = await asyncio.to_thread(_old_text, ctx.workspace, path) if existed else None
            try:
                # The path is walked again below the workspace at the moment of the write (atomic.py).
                await asyncio.to_thread(atomic_write, path, data, root=ctx.workspace)
            except OSError as error:
                raise ToolFailure(f"cannot write {shown}: {error.strerror or error}") from None
        how = "replaced" if existed else "created"
        diffable = before is not None or not existed  # not when it replaced a binary or unreadable file
        diff = await asyncio.to_thread(file_diff, shown, before, args.content) if diffable else ""
        return Changed(f"wrote {len(data)} bytes to {shown} ({how})", diff)


def _old_text(root: Path, path: Path) -> str | None:
    """What the file held, for the diff; None when it is not UTF-8 text or cannot be read (no diff then)."""
    try:
        with os.fdopen(open_regular(root, path), "rb") as handle:
            return handle.read(MAX_WRITE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
