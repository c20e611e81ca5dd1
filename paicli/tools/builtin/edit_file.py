"""edit_file: replace one exact occurrence of a text in a file, keeping its line endings, BOM and mode.

Matching is exact. In a file with CRLF line endings, `old_text` written with `\\n` still matches (it is
compared in CRLF form), and `new_text` is written back with CRLF. The whole read-modify-write runs
under the path's lock, so two edits of one file never interleave.

A file larger than `MAX_EDIT_BYTES` (write_file's limit: an edit could not write it back anyway) is
refused before it is read, by its size and by a read that stops one byte past the limit (a file that grows
between the two, or one whose size the system does not report): memory stays bounded whatever the file.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.common.wording import counted
from paicli.tools.atomic import atomic_write
from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.beneath import NotRegularFile, open_regular
from paicli.tools.builtin.write_file import MAX_WRITE_BYTES
from paicli.tools.diff import Changed, file_diff
from paicli.tools.guard import display_path, resolve_in_workspace

UTF8_BOM = b"\xef\xbb\xbf"
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")
MAX_EDIT_BYTES = MAX_WRITE_BYTES


class EditFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="File path, relative to the workspace.")
    old_text: str = Field(
        description="The exact text to replace. It must occur exactly once in the file; "
        "include surrounding lines to make it unique."
    )
    new_text: str = Field(description="The text to put in its place (may be empty to delete).")


class EditFile(Tool):
    name = "edit_file"
    description = (
        "Replace one exact occurrence of old_text with new_text in an existing file. old_text must "
        "match the file exactly once (whitespace included, without read_file's line numbers); add "
        "surrounding lines when it is not unique. Use write_file to create a file."
    )
    Args = EditFileArgs
    effect = Effect.WRITE
    confined = True
    path_argument = summary_argument = "path"

    async def run(self, args: EditFileArgs, ctx: ToolContext) -> str:
        if not args.old_text:
            raise ToolFailure("old_text is empty; give the exact text to replace (write_file creates files)")
        path = resolve_in_workspace(ctx.workspace, args.path, for_write=True)
        shown = display_path(ctx.workspace, path)
        async with ctx.locks.lock(path):
            return await asyncio.to_thread(_edit, ctx.workspace, path, shown, args.old_text, args.new_text)


def _edit(root: Path, path: Path, shown: str, old_text: str, new_text: str) -> str:
    original = _read_bytes(root, path, shown)
    bom = UTF8_BOM if original.startswith(UTF8_BOM) else b""
    try:
        text = original[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{shown} is not UTF-8 text; edit_file only edits text files") from None

    crlf = text.count("\r\n") > text.count("\n") - text.count("\r\n")
    old, new = old_text, new_text
    if crlf:
        new = _to_crlf(new_text)
        if text.count(old) == 0:
            old = _to_crlf(old_text)

    count = text.count(old)
    if count == 0:
        hint = ""
        if _LINE_NUMBER_PREFIX.match(old_text):
            hint = " (leave out the line numbers and tab that read_file puts before each line)"
        raise ToolFailure(f"old_text not found in {shown}{hint}; read the file again and copy it exactly")
    if count > 1:
        raise ToolFailure(f"old_text occurs {count} times in {shown}; include more context to make it unique")

    updated = bom + text.replace(old, new, 1).encode("utf-8")
    if len(updated) > MAX_WRITE_BYTES:
        raise ToolFailure(f"the edited file would be {len(updated)} bytes; the limit is {MAX_WRITE_BYTES}")
    try:
        atomic_write(path, updated, root=root)
    except OSError as error:
        raise ToolFailure(f"cannot write {shown}: {error.strerror or error}") from None
    removed = old.count("\n") + 1
    added = (new.count("\n") + 1) if new else 0
    diff = file_diff(shown, text, text.replace(old, new, 1))
    return Changed(f"edited {shown}: replaced {counted(removed, 'line')} with {counted(added, 'line')}", diff)


def _read_bytes(root: Path, path: Path, shown: str) -> bytes:
    try:
        with os.fdopen(open_regular(root, path), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(MAX_EDIT_BYTES + 1) if size <= MAX_EDIT_BYTES else b""
            if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
                raise ToolFailure(_too_large(shown, f"{size} bytes" if size > MAX_EDIT_BYTES else "larger"))
            return data
    except FileNotFoundError:
        raise ToolFailure(f"file not found: {shown} (use write_file to create it)") from None
    except IsADirectoryError:
        raise ToolFailure(f"{shown} is a folder, not a file") from None
    except NotRegularFile:
        raise ToolFailure(f"{shown} is not a regular file; refusing to edit it") from None
    except OSError as error:
        raise ToolFailure(f"cannot read {shown}: {error.strerror or error}") from None


def _too_large(shown: str, size: str) -> str:
    return (
        f"{shown} is {size}; edit_file edits files of at most {MAX_EDIT_BYTES} bytes. Read the "
        "part you need with read_file (offset, limit) and change it with a command (sed -i, a script) instead"
    )


def _to_crlf(text: str) -> str:
    """`text` with every line ending as CRLF (existing CRLFs are kept, not doubled)."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
