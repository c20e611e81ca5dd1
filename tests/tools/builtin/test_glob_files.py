"""glob_files: glob semantics, sorted relative results, junk skipped, nothing from outside."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin import glob_files
from paicli.tools.builtin.glob_files import GlobFiles, GlobFilesArgs
from paicli.tools.glob_pattern import glob_to_regex


def make_tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


async def glob(ctx: ToolContext, pattern: str, path: str = ".") -> str:
    return await GlobFiles().run(GlobFilesArgs(pattern=pattern, path=path), ctx)


TREE = [
    "setup.py",
    "src/app/main.py",
    "src/app/util.py",
    "src/app/data.json",
    "tests/test_main.py",
    ".git/hooks/x.py",
    "node_modules/lib/index.py",
    ".venv/lib/site.py",
    "src/app/__pycache__/main.cpython-311.py",
]


async def test_double_star_finds_files_at_every_depth_sorted(workspace: Path, ctx: ToolContext) -> None:
    make_tree(workspace, TREE)
    assert (await glob(ctx, "**/*.py")).splitlines() == [
        "setup.py",
        "src/app/main.py",
        "src/app/util.py",
        "tests/test_main.py",
    ]


async def test_single_star_stays_in_one_folder(workspace: Path, ctx: ToolContext) -> None:
    make_tree(workspace, TREE)
    assert await glob(ctx, "*.py") == "setup.py"
    assert (await glob(ctx, "src/*/*.json")) == "src/app/data.json"


async def test_results_are_relative_to_the_workspace_even_from_a_subfolder(workspace: Path, ctx: ToolContext) -> None:
    make_tree(workspace, TREE)
    assert (await glob(ctx, "*.py", path="src/app")).splitlines() == ["src/app/main.py", "src/app/util.py"]


async def test_folders_match_too_and_end_with_slash(workspace: Path, ctx: ToolContext) -> None:
    make_tree(workspace, TREE)
    assert await glob(ctx, "src/a*") == "src/app/"


async def test_symlinks_resolving_outside_are_never_returned(tmp_path: Path, workspace: Path, ctx: ToolContext) -> None:
    (tmp_path / "secret.py").write_text("x")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "deep.py").write_text("x")
    (workspace / "ok.py").write_text("x")
    (workspace / "leak.py").symlink_to(tmp_path / "secret.py")
    (workspace / "leakdir").symlink_to(tmp_path / "outdir", target_is_directory=True)
    assert await glob(ctx, "**/*") == "ok.py"


async def test_symlink_loop_inside_does_not_hang(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a").mkdir()
    (workspace / "a" / "f.py").write_text("")
    (workspace / "a" / "loop").symlink_to(workspace / "a", target_is_directory=True)
    assert (await glob(ctx, "**/*.py")).splitlines() == ["a/f.py"]


async def test_results_are_capped(workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(glob_files, "MAX_RESULTS", 5)
    make_tree(workspace, [f"f{i:02}.txt" for i in range(12)])
    lines = (await glob(ctx, "*.txt")).splitlines()
    assert lines[:5] == [f"f{i:02}.txt" for i in range(5)]
    assert lines[-1].startswith("... 7 more matches")


async def test_no_match_says_so(workspace: Path, ctx: ToolContext) -> None:
    assert "no paths match" in await glob(ctx, "**/*.rs")


@pytest.mark.parametrize("pattern", ["/etc/*", "../*", "a/../../*", ""])
async def test_patterns_that_leave_the_folder_are_refused(ctx: ToolContext, pattern: str) -> None:
    with pytest.raises(ToolFailure):
        await glob(ctx, pattern)


async def test_outside_path_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="outside"):
        await glob(ctx, "*", path="..")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/a/b", True),
        ("test_?.py", "test_1.py", True),
        ("test_[ab].py", "test_b.py", True),
        ("test_[!ab].py", "test_b.py", False),
        ("a+b(c).txt", "a+b(c).txt", True),
    ],
)
def test_glob_translation(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_to_regex(pattern).fullmatch(path)) is matches


async def test_ignored_files_are_found_only_when_asked(workspace: Path, ctx: ToolContext) -> None:
    make_tree(workspace, ["src/a.py", "build/gen.py", ".env", "fixtures/f.py"])
    (workspace / ".gitignore").write_text("build/\n.env\n")
    (workspace / ".paicliignore").write_text("fixtures/\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    assert await glob(ctx, "**/*.py") == "src/a.py"
    assert "no paths match" in await glob(ctx, ".env")
    found = await GlobFiles().run(GlobFilesArgs(pattern="**/*", include_ignored=True), ctx)
    assert found.splitlines() == [
        ".env",
        ".gitignore",
        ".paicliignore",
        "build/",
        "build/gen.py",
        "fixtures/",
        "fixtures/f.py",
        "src/",
        "src/a.py",
    ]


async def test_the_sessions_remembered_listing_gives_what_a_fresh_one_gives(workspace: Path) -> None:
    """glob_files takes the session's listing (paicli/tools/listing_memo.py) while it holds: the same paths
    as listing afresh, before and after files are added, deleted (a tracked one too) and ignored."""
    from paicli.tools.listing_memo import ListingMemo

    make_tree(workspace, ["src/a.py", "src/deep/b.py", "build/gen.py", "docs/x.md", "gone.py", "hidden/h.py"])
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / ".paicliignore").write_text("hidden/\n")
    (workspace / "link.py").symlink_to("src/a.py")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    memo = ListingMemo(clock=lambda: time.time_ns() + 3 * 10**9)  # as if 3 s had passed: kept at once
    remembering = ToolContext(workspace=workspace, listings=memo)
    patterns = ["**/*.py", "**/*", "src/**", "*", "**/deep"]

    async def same() -> None:
        for pattern in patterns:
            assert await glob(remembering, pattern) == await glob(ToolContext(workspace=workspace), pattern), pattern
        memo.settle()

    await same()
    assert memo.made == 1, "glob_files did not take the session's listing"
    await same()
    assert memo.made == 1, "the remembered listing was not used"
    (workspace / "gone.py").unlink()  # tracked, deleted
    (workspace / "src" / "deep" / "new.py").write_text("x\n")
    await same()
    assert "src/deep/new.py" in await glob(remembering, "**/*.py") and "gone.py" not in await glob(remembering, "*")
    (workspace / "src" / ".gitignore").write_text("deep/\n")
    await same()
    assert "src/deep/new.py" not in await glob(remembering, "**/*.py")
