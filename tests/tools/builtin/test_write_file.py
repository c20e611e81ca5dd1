"""write_file: guarded, atomic, locked, size-limited; says whether it created or replaced."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin.write_file import MAX_WRITE_BYTES, WriteFile, WriteFileArgs


async def write(ctx: ToolContext, path: str, content: str) -> str:
    return await WriteFile().run(WriteFileArgs(path=path, content=content), ctx)


async def write_error(ctx: ToolContext, path: str, content: str = "x") -> str:
    with pytest.raises(ToolFailure) as caught:
        await write(ctx, path, content)
    return str(caught.value)


async def test_creates_a_file_in_new_folders(workspace: Path, ctx: ToolContext) -> None:
    assert await write(ctx, "src/pkg/mod.py", "x = 1\n") == "wrote 6 bytes to src/pkg/mod.py (created)"
    assert (workspace / "src" / "pkg" / "mod.py").read_text() == "x = 1\n"


async def test_replaces_an_existing_file_and_keeps_its_mode(workspace: Path, ctx: ToolContext) -> None:
    script = workspace / "run.sh"
    script.write_text("old\n")
    script.chmod(0o755)
    assert await write(ctx, "run.sh", "héllo\n") == "wrote 7 bytes to run.sh (replaced)"
    assert script.read_text() == "héllo\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_writing_through_an_inside_symlink_replaces_the_target(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "real.txt").write_text("old")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    await write(ctx, "alias.txt", "new")
    assert (workspace / "real.txt").read_text() == "new"
    assert (workspace / "alias.txt").is_symlink()


async def test_too_large_content_is_refused(ctx: ToolContext, workspace: Path) -> None:
    assert "at most" in await write_error(ctx, "big.txt", "x" * (MAX_WRITE_BYTES + 1))
    assert not (workspace / "big.txt").exists()


async def test_a_folder_is_not_overwritten(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "src").mkdir()
    assert "folder" in await write_error(ctx, "src")


@pytest.mark.parametrize("path", [".git/config", ".paicli/config.toml", "../escape.txt", "~/x"])
async def test_protected_and_outside_paths_are_refused(ctx: ToolContext, path: str) -> None:
    assert (await write_error(ctx, path)).startswith("refused:")


async def test_symlink_out_is_refused_and_target_untouched(tmp_path: Path, workspace: Path, ctx: ToolContext) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (workspace / "link.txt").symlink_to(outside)
    assert "outside" in await write_error(ctx, "link.txt", "pwned")
    assert outside.read_text() == "keep"


async def test_concurrent_writes_to_one_path_are_serialised(workspace: Path, ctx: ToolContext) -> None:
    contents = [f"writer {i}\n" * 1000 for i in range(8)]
    await asyncio.gather(*(write(ctx, "same.txt", c) for c in contents))
    assert (workspace / "same.txt").read_text() in contents
    assert not [p for p in workspace.iterdir() if p.name.endswith(".paicli-tmp")]
