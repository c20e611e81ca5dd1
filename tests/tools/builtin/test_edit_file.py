"""edit_file: exactly one match, clear errors otherwise; CRLF, BOM and mode bits survive."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin.edit_file import MAX_EDIT_BYTES, EditFile, EditFileArgs


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    return await EditFile().run(EditFileArgs(path=path, old_text=old, new_text=new), ctx)


async def edit_error(ctx: ToolContext, path: str, old: str, new: str = "y") -> str:
    with pytest.raises(ToolFailure) as caught:
        await edit(ctx, path, old, new)
    return str(caught.value)


async def test_one_match_is_replaced(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("def f():\n    return 1\n")
    out = await edit(ctx, "a.py", "return 1", "return 2")
    assert out.startswith("edited a.py")
    assert (workspace / "a.py").read_text() == "def f():\n    return 2\n"


async def test_no_match_is_an_error_and_the_file_is_untouched(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    assert "old_text not found in a.py" in await edit_error(ctx, "a.py", "y = 2")
    assert (workspace / "a.py").read_text() == "x = 1\n"


async def test_several_matches_ask_for_more_context(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("x = 1\nx = 1\nx = 1\n")
    message = await edit_error(ctx, "a.py", "x = 1")
    assert "old_text occurs 3 times" in message
    assert "include more context" in message
    assert (workspace / "a.py").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_line_numbers_copied_from_read_file_get_a_hint(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    assert "line numbers" in await edit_error(ctx, "a.py", "     1\tx = 1")


async def test_empty_old_text_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.py").write_text("x\n")
    assert "empty" in await edit_error(ctx, "a.py", "")


async def test_missing_file_points_to_write_file(ctx: ToolContext) -> None:
    assert "write_file" in await edit_error(ctx, "nope.py", "x")


async def test_crlf_file_matches_lf_text_and_stays_crlf(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await edit(ctx, "w.txt", "one\ntwo\n", "uno\ndos\nextra\n")
    assert (workspace / "w.txt").read_bytes() == b"uno\r\ndos\r\nextra\r\nthree\r\n"


async def test_crlf_file_single_line_edit_adds_crlf_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "w.txt").write_bytes(b"a\r\nb\r\n")
    await edit(ctx, "w.txt", "b", "b\nc")
    assert (workspace / "w.txt").read_bytes() == b"a\r\nb\r\nc\r\n"


async def test_lf_file_stays_lf(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "u.txt").write_bytes(b"a\nb\n")
    await edit(ctx, "u.txt", "a\n", "a\nz\n")
    assert (workspace / "u.txt").read_bytes() == b"a\nz\nb\n"


async def test_bom_is_preserved(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "b.txt").write_bytes(b"\xef\xbb\xbfhello world\n")
    await edit(ctx, "b.txt", "world", "there")
    assert (workspace / "b.txt").read_bytes() == b"\xef\xbb\xbfhello there\n"


async def test_mode_bits_are_preserved(workspace: Path, ctx: ToolContext) -> None:
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    await edit(ctx, "run.sh", "old", "new")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text() == "echo new\n"


async def test_deleting_text_with_empty_new_text(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("keep\ndrop\n")
    await edit(ctx, "a.txt", "drop\n", "")
    assert (workspace / "a.txt").read_text() == "keep\n"


async def test_protected_paths_are_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    assert await edit_error(ctx, ".git/config", "[core]") == "refused: .git/config is protected"


@pytest.mark.parametrize("size", [MAX_EDIT_BYTES + 1, 4 * MAX_EDIT_BYTES])
async def test_a_file_over_the_limit_is_refused_unread(workspace: Path, ctx: ToolContext, size: int) -> None:
    """An 800 MB one-line file once took 1.7 GB of memory: now its size refuses it before any read.
    A sparse file: large on paper, nothing on disk."""
    with (workspace / "big.txt").open("wb") as handle:
        handle.write(b"needle ")
        handle.truncate(size)
    error = await edit_error(ctx, "big.txt", "needle")
    assert f"big.txt is {size} bytes" in error and f"at most {MAX_EDIT_BYTES} bytes" in error
    assert "read_file" in error
    assert (workspace / "big.txt").stat().st_size == size


async def test_a_file_at_the_limit_is_still_edited(workspace: Path, ctx: ToolContext) -> None:
    body = b"x" * (MAX_EDIT_BYTES - len(b"needle\n")) + b"needle\n"
    (workspace / "edge.txt").write_bytes(body)
    assert (await edit(ctx, "edge.txt", "needle", "pin")).startswith("edited edge.txt")
