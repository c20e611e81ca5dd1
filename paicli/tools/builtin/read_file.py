"""read_file: a text file's lines, numbered, a page at a time.

Output format: each line as `{number:>6}\t{text}` (1-based, like `cat -n`), line endings removed. A
file is binary, and refused, when its first 8 KB hold a NUL byte or are not UTF-8; later invalid
bytes are shown as U+FFFD. A page stops at `limit` lines or when it would not fit in the tool output
budget, and its last line tells the model which `offset` continues.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.beneath import NotRegularFile, open_regular
from paicli.tools.guard import display_path, resolve_in_workspace

DEFAULT_LIMIT = 2000
MAX_PAGE_CHARS = 256 * 1024
MAX_LINE_CHARS = 2000
SNIFF_BYTES = 8192
_FOOTER_ROOM = 200  # characters kept free for the continuation note


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="File path, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="First line to read (1-based). Default 1.")
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, description=f"Maximum number of lines to read. Default {DEFAULT_LIMIT}."
    )


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a UTF-8 text file from the workspace. Lines come back numbered as `<number><TAB><text>` "
        "(the number and tab are not part of the file). Long files come a page at a time: the last line "
        "says which `offset` to read next. Binary files are refused; use list_dir for folders."
    )
    Args = ReadFileArgs
    effect = Effect.READ
    confined = True
    path_argument = summary_argument = "path"
    untrusted_output = True

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> str:
        path = resolve_in_workspace(ctx.workspace, args.path, for_write=False)
        shown = display_path(ctx.workspace, path)
        budget = MAX_PAGE_CHARS
        if ctx.output_limit > 4 * _FOOTER_ROOM:
            budget = min(budget, ctx.output_limit - _FOOTER_ROOM)
        return await asyncio.to_thread(_read_page, ctx.workspace, path, shown, args.offset, args.limit, budget)


def _open(root: Path, path: Path, shown: str) -> BinaryIO:
    """The file, opened by walking below the workspace again now (beneath.py), never through a symlink out."""
    try:
        return os.fdopen(open_regular(root, path), "rb")
    except FileNotFoundError:
        raise ToolFailure(f"file not found: {shown}") from None
    except IsADirectoryError:
        raise ToolFailure(f"{shown} is a folder, not a file; use list_dir to see what it holds") from None
    except NotRegularFile:
        raise ToolFailure(f"{shown} is not a regular file (a device, socket or pipe); refusing to read it") from None
    except OSError as error:
        raise ToolFailure(f"cannot read {shown}: {error.strerror or error}") from None


def _read_page(root: Path, path: Path, shown: str, offset: int, limit: int, budget: int) -> str:
    with _open(root, path, shown) as handle:
        _refuse_binary(handle.read(SNIFF_BYTES), shown)
        handle.seek(0)
        lines: list[str] = []
        used = 0
        total = 0
        capped_at: int | None = None
        for number, (raw, cut) in enumerate(_bounded_lines(handle), start=1):
            total = number
            if number < offset or capped_at is not None or number >= offset + limit:
                continue
            line = _render_line(number, raw, cut)
            if used + len(line) > budget and lines:
                capped_at = number
                continue
            lines.append(line)
            used += len(line)

    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolFailure(f"offset {offset} is past the end of {shown}, which has {total} lines")
    last = offset + len(lines) - 1
    if capped_at is not None:
        lines.append(
            f"... output capped; showing lines {offset}-{last} of {total}; use offset={capped_at} to read more"
        )
    elif last < total:
        lines.append(f"... file has {total} lines; use offset={last + 1} to read more")
    return "".join(lines).rstrip("\n")


def _refuse_binary(head: bytes, shown: str) -> None:
    if b"\x00" in head:
        raise ToolFailure(f"{shown} is a binary file (it contains NUL bytes); refusing to read it")
    try:
        # Incremental so that a multi-byte character cut at the 8 KB boundary is not taken as invalid.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        raise ToolFailure(f"{shown} is not UTF-8 text (binary or another encoding); refusing to read it") from None


def _bounded_lines(handle: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line with the count of bytes cut off its end (a 1 GB line never sits in memory)."""
    cap = MAX_LINE_CHARS * 4 + 1
    while line := handle.readline(cap):
        cut = 0
        if not line.endswith(b"\n"):
            while chunk := handle.readline(1 << 16):
                cut += len(chunk)
                if chunk.endswith(b"\n"):
                    break
        yield line, cut


def _render_line(number: int, raw: bytes, cut: int) -> str:
    text = raw.decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
    if number == 1:
        text = text.removeprefix("\ufeff")
    if len(text) > MAX_LINE_CHARS or cut:
        text = text[:MAX_LINE_CHARS] + f" ... [line cut; it is {len(raw) + cut} bytes long]"
    return f"{number:>6}\t{text}\n"
