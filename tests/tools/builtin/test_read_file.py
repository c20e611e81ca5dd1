"""read_file: numbered lines, paging with offset/limit, caps, and clear refusals."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin.read_file import MAX_LINE_CHARS, ReadFile, ReadFileArgs


async def read(ctx: ToolContext, path: str, **kwargs: int) -> str:
    return await ReadFile().run(ReadFileArgs(path=path, **kwargs), ctx)


async def read_error(ctx: ToolContext, path: str, **kwargs: int) -> str:
    with pytest.raises(ToolFailure) as caught:
        await read(ctx, path, **kwargs)
    return str(caught.value)


async def test_lines_come_back_numbered_with_a_tab(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("import os\n\nprint(os.name)\n")
    assert await read(ctx, "a.py") == "     1\timport os\n     2\t\n     3\tprint(os.name)"


async def test_offset_and_limit_page_through_the_file(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await read(ctx, "n.txt", offset=4, limit=3)
    assert out.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert out.splitlines()[-1] == "... file has 10 lines; use offset=7 to read more"


async def test_default_limit_is_2000_lines_and_says_how_to_continue(workspace: Path) -> None:
    (workspace / "big.txt").write_text("x\n" * 5000)
    ctx = ToolContext(workspace=workspace, output_limit=1_000_000)
    out = await read(ctx, "big.txt")
    lines = out.splitlines()
    assert len(lines) == 2001
    assert lines[-1] == "... file has 5000 lines; use offset=2001 to read more"


async def test_a_page_fits_the_output_budget_and_names_the_next_offset(workspace: Path) -> None:
    (workspace / "wide.txt").write_text(("w" * 99 + "\n") * 1000)
    ctx = ToolContext(workspace=workspace, output_limit=5_000)
    out = await read(ctx, "wide.txt")
    assert len(out) <= 5_000
    last = out.splitlines()[-1]
    assert "of 1000" in last
    next_offset = int(last.rsplit("offset=", 1)[1].split()[0])
    assert out.splitlines()[-2].startswith(f"{next_offset - 1:>6}\t")


async def test_offset_past_the_end_is_an_error(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "s.txt").write_text("one\ntwo\n")
    assert "past the end" in await read_error(ctx, "s.txt", offset=5)


async def test_empty_file_says_so(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "e.txt").write_text("")
    assert "empty" in await read(ctx, "e.txt")


async def test_crlf_and_bom_are_not_shown(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert await read(ctx, "w.txt") == "     1\tone\n     2\ttwo"


async def test_very_long_lines_are_cut_with_a_note(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "min.js").write_text("a" * 100_000 + "\nnext\n")
    out = await read(ctx, "min.js")
    first, second = out.splitlines()[:2]
    assert len(first) < MAX_LINE_CHARS + 100
    assert "100001 bytes long" in first
    assert second == "     2\tnext"


async def test_binary_file_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "binary" in await read_error(ctx, "img.png")


async def test_undecodable_file_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "latin.txt").write_bytes("café crème".encode("latin-1"))
    assert "not UTF-8" in await read_error(ctx, "latin.txt")


async def test_multibyte_character_across_the_sniff_boundary_is_fine(workspace: Path, ctx: ToolContext) -> None:
    head = ("a" * 99 + "\n") * 81 + "a" * 91  # 8191 bytes: the é straddles byte 8192
    (workspace / "u.txt").write_bytes((head + "é\n").encode())
    assert (await read(ctx, "u.txt")).endswith("é")


async def test_missing_file_is_a_clear_error(ctx: ToolContext) -> None:
    assert await read_error(ctx, "nope.txt") == "file not found: nope.txt"


async def test_folder_suggests_list_dir(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "src").mkdir()
    assert "list_dir" in await read_error(ctx, "src")


async def test_paths_outside_are_refused(tmp_path: Path, workspace: Path, ctx: ToolContext) -> None:
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "link").symlink_to(tmp_path / "secret.txt")
    assert "outside" in await read_error(ctx, "../secret.txt")
    assert "outside" in await read_error(ctx, "link")


async def test_a_fifo_is_refused_without_blocking(workspace: Path, ctx: ToolContext) -> None:
    os.mkfifo(workspace / "pipe")
    assert "not a regular file" in await asyncio.wait_for(read_error(ctx, "pipe"), 10)
