"""list_dir: sorted entries, folders with `/`, links shown, capped, guarded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin import list_dir
from paicli.tools.builtin.list_dir import ListDir, ListDirArgs


async def listing(ctx: ToolContext, path: str | None = None) -> str:
    args = ListDirArgs() if path is None else ListDirArgs(path=path)
    return await ListDir().run(args, ctx)


async def test_default_is_the_workspace_sorted_with_folders_marked(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "b.txt").write_text("")
    (workspace / "a").mkdir()
    (workspace / ".hidden").write_text("")
    (workspace / ".git").mkdir()
    assert await listing(ctx) == ".git/ (ignored)\n.hidden\na/\nb.txt"


async def test_symlinks_show_their_target(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to("real", target_is_directory=True)
    assert "alias/ -> real" in (await listing(ctx)).splitlines()


async def test_subfolder_and_empty_folder(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "src" / "empty").mkdir(parents=True)
    (workspace / "src" / "m.py").write_text("")
    assert await listing(ctx, "src") == "empty/\nm.py"
    assert "empty" in await listing(ctx, "src/empty")


async def test_many_entries_are_capped_with_a_count(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(list_dir, "MAX_ENTRIES", 10)
    for i in range(25):
        (workspace / f"f{i:02}").write_text("")
    lines = (await listing(ctx)).splitlines()
    assert lines[:10] == [f"f{i:02}" for i in range(10)]
    assert lines[-1].startswith("... and 15 more entries")


async def test_a_file_suggests_read_file(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("")
    with pytest.raises(ToolFailure, match="read_file"):
        await listing(ctx, "a.txt")


async def test_missing_and_outside_folders_are_errors(tmp_path: Path, workspace: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="not found"):
        await listing(ctx, "nope")
    with pytest.raises(ToolFailure, match="outside"):
        await listing(ctx, "..")
    (workspace / "out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ToolFailure, match="outside"):
        await listing(ctx, "out")


async def test_ignored_entries_are_marked_not_hidden(workspace: Path, ctx: ToolContext) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / ".gitignore").write_text(".env\nbuild/\n")
    (workspace / ".paicliignore").write_text("fixtures/\n")
    for folder in ("build", "fixtures", "src"):
        (workspace / folder).mkdir()
    (workspace / ".env").write_text("KEY=1\n")
    (workspace / "build" / "out.js").write_text("")
    assert (await listing(ctx)).splitlines() == [
        ".env (ignored)",
        ".git/ (ignored)",
        ".gitignore",
        ".paicliignore",
        "build/ (ignored)",
        "fixtures/ (ignored)",
        "src/",
    ]
    assert await listing(ctx, "build") == "out.js (ignored)"
