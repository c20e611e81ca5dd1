"""grep_code: Python regex over text files, `path:line: text`, filters, caps, clear errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin import grep_code
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs


async def grep(ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None) -> str:
    return await GrepCode().run(GrepCodeArgs(pattern=pattern, path=path, glob=glob), ctx)


@pytest.fixture
def project(workspace: Path) -> Path:
    files = {
        "src/a.py": "import os\n\ndef handler(event):\n    return os.getcwd()\n",
        "src/b.js": "function handler(e) { return 1 }\n",
        "README.md": "Call handler() to start.\n",
        "node_modules/dep/index.js": "function handler() {}\n",
        ".git/config": "handler = yes\n",
        ".venv/lib/x.py": "def handler(): pass\n",
        "src/__pycache__/a.cpython-311.pyc": "def handler",
    }
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / "src" / "blob.bin").write_bytes(b"handler\x00\x01\x02")
    return workspace


async def test_matches_come_as_path_line_text_sorted(project: Path, ctx: ToolContext) -> None:
    assert (await grep(ctx, r"handler\(")).splitlines() == [
        "README.md:1: Call handler() to start.",
        "src/a.py:3: def handler(event):",
        "src/b.js:1: function handler(e) { return 1 }",
    ]


async def test_glob_filters_file_names(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "handler", glob="*.py") == "src/a.py:3: def handler(event):"
    assert await grep(ctx, "handler", glob="src/*.js") == "src/b.js:1: function handler(e) { return 1 }"


async def test_path_may_be_a_folder_or_one_file(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "os", path="src/a.py") == "src/a.py:1: import os\nsrc/a.py:4:     return os.getcwd()"


async def test_case_insensitive_with_inline_flag(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "(?i)CALL") == "README.md:1: Call handler() to start."


async def test_invalid_regex_is_a_clear_error(project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="invalid regular expression"):
        await grep(ctx, "handler(")


async def test_no_match_says_so(project: Path, ctx: ToolContext) -> None:
    assert "no matches" in await grep(ctx, "zebra")


async def test_matches_are_capped(workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_code, "MAX_MATCHES", 3)
    (workspace / "many.txt").write_text("hit\n" * 10)
    lines = (await grep(ctx, "hit")).splitlines()
    assert len(lines) == 4
    assert lines[-1].startswith("... 7 more matches")


async def test_long_lines_are_clipped(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "min.js").write_text("x" * 5000 + "needle\n")
    out = await grep(ctx, "needle")
    assert len(out) < 400 and out.endswith(" ...")


async def test_outside_paths_are_refused_and_links_out_skipped(
    tmp_path: Path, workspace: Path, ctx: ToolContext
) -> None:
    (tmp_path / "secret.txt").write_text("needle\n")
    (workspace / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (workspace / "mine.txt").write_text("needle\n")
    assert await grep(ctx, "needle") == "mine.txt:1: needle"
    with pytest.raises(ToolFailure, match="outside"):
        await grep(ctx, "needle", path="..")


async def test_missing_path_is_an_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="not found"):
        await grep(ctx, "x", path="nope")


async def test_fifos_are_skipped_not_read_forever(workspace: Path, ctx: ToolContext) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("needle\n")
    assert await asyncio.wait_for(grep(ctx, "needle"), 10) == "a.txt:1: needle"
