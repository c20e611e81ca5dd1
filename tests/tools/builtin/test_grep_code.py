"""grep_code: RE2 over the model's view of the workspace, grouped by file, filters, caps, clear errors."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin import grep_code
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs
from paicli.tools.builtin.read_file import ReadFile, ReadFileArgs
from paicli.tools.file_kinds import select
from paicli.tools.grep_search import read_hits
from paicli.tools.regex_syntax import compile_pattern


async def grep(
    ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None, include_ignored: bool = False
) -> str:
    args = GrepCodeArgs(pattern=pattern, path=path, glob=glob, include_ignored=include_ignored)
    return await GrepCode().run(args, ctx)


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
        "README.md (1 match)",
        "  1: Call handler() to start.",
        "src/a.py (1 match)",
        "  3: def handler(event):",
        "src/b.js (1 match)",
        "  1: function handler(e) { return 1 }",
    ]


async def test_glob_filters_file_names(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "handler", glob="*.py") == "src/a.py (1 match)\n  3: def handler(event):"
    assert await grep(ctx, "handler", glob="src/*.js") == "src/b.js (1 match)\n  1: function handler(e) { return 1 }"


async def test_path_may_be_a_folder_or_one_file(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "os", path="src/a.py") == "src/a.py (2 matches)\n  1: import os\n  4:     return os.getcwd()"


async def test_case_insensitive_with_inline_flag(project: Path, ctx: ToolContext) -> None:
    assert await grep(ctx, "(?i)CALL") == "README.md (1 match)\n  1: Call handler() to start."


async def test_invalid_regex_is_a_clear_error(project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="invalid regular expression"):
        await grep(ctx, "handler(")


async def test_no_match_says_so(project: Path, ctx: ToolContext) -> None:
    assert "no matches" in await grep(ctx, "zebra")


async def test_matches_are_capped_per_file_and_in_all_naming_the_folders_of_the_rest(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_code, "MAX_MATCHES", 5)
    (workspace / "many.txt").write_text("hit\n" * 30)
    for folder, count in (("lib", 3), ("tests/unit", 2)):
        for n in range(count):
            (workspace / folder).mkdir(parents=True, exist_ok=True)
            (workspace / folder / f"f{n}.txt").write_text("hit\nhit\n")
    lines = (await grep(ctx, "hit")).splitlines()
    assert lines[:3] == ["lib/f0.txt (2 matches)", "  1: hit", "  2: hit"]
    assert lines[3:6] == ["lib/f1.txt (2 matches)", "  1: hit", "  2: hit"]
    assert lines[6:9] == ["lib/f2.txt (2 matches)", "  1: hit", "  ... 1 more in this file"]
    assert lines[9] == (
        "... 34 more matches in 3 more files not shown, in tests/unit/ (2), ./ (1); narrow the pattern, path or glob"
    )
    assert len(lines) == 10


async def test_one_file_shows_at_most_its_share_of_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "many.txt").write_text("hit\n" * 30)
    lines = (await grep(ctx, "hit")).splitlines()
    assert lines[0] == "many.txt (30 matches)"
    assert lines[-1] == f"  ... {30 - grep_code.MAX_PER_FILE} more in this file"


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
    assert await grep(ctx, "needle") == "mine.txt (1 match)\n  1: needle"
    with pytest.raises(ToolFailure, match="outside"):
        await grep(ctx, "needle", path="..")


async def test_missing_path_is_an_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="not found"):
        await grep(ctx, "x", path="nope")


async def test_fifos_are_skipped_not_read_forever(workspace: Path, ctx: ToolContext) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("needle\n")
    assert await asyncio.wait_for(grep(ctx, "needle"), 10) == "a.txt (1 match)\n  1: needle"


async def test_a_git_ignored_env_is_never_searched_unless_asked(workspace: Path, ctx: ToolContext) -> None:
    (workspace / ".env").write_text("API_KEY=sk-live-1234\n")
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / "app.py").write_text("key = os.environ['API_KEY']\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    assert await grep(ctx, "API_KEY") == "app.py (1 match)\n  1: key = os.environ['API_KEY']"
    with pytest.raises(ToolFailure, match="ignored"):
        await grep(ctx, "API_KEY", path=".env")
    assert ".env (1 match)" in await grep(ctx, "API_KEY", include_ignored=True)
    assert await grep(ctx, "API_KEY", path=".env", include_ignored=True) == ".env (1 match)\n  1: API_KEY=sk-live-1234"
    assert "sk-live-1234" in await ReadFile().run(ReadFileArgs(path=".env"), ctx)  # read by its path, as before
    (workspace / "build").mkdir()
    (workspace / ".gitignore").write_text(".env\nbuild/\n")
    (workspace / "build" / "out.js").write_text("API_KEY\n")
    with pytest.raises(ToolFailure, match="build is ignored"):
        await grep(ctx, "API_KEY", path="build")
    assert "build/out.js (1 match)" in await grep(ctx, "API_KEY", path="build", include_ignored=True)


@pytest.mark.parametrize("engine", ["rg", "in process"])
async def test_a_git_ignored_build_copy_of_the_code_never_shows(
    workspace: Path, ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    rg, git = shutil.which("rg"), shutil.which("git")
    if engine == "rg" and rg is None:
        pytest.skip("rg is not on PATH")
    assert git is not None
    for n in range(30):
        code = f"def integrate_{n}(f):\n    return f\n" + ("# padding line\n" * 3000 if n == 7 else "")
        for folder in ("src/calc/", "build/gen/calc/"):
            (workspace / folder).mkdir(parents=True, exist_ok=True)
            (workspace / folder / f"mod_{n}.py").write_text(code)
    (workspace / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    if engine == "in process":  # a PATH with git and without rg
        only_git = tmp_path / "only-git"
        only_git.mkdir()
        (only_git / "git").symlink_to(git)
        monkeypatch.setenv("PATH", str(only_git))
    found = await grep(ctx, r"def integrate_\d+")
    assert "build/" not in found
    assert [line.split()[0] for line in found.splitlines() if not line.startswith(" ")] == sorted(
        f"src/calc/mod_{n}.py" for n in range(30)
    )
    assert "src/calc/mod_7.py (1 match)\n  1: def integrate_7(f):" in found  # a file rg does not report whole


async def test_paicliignore_keeps_tracked_files_out_of_the_search(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "fixtures").mkdir()
    (workspace / "fixtures" / "dump.sql").write_text("needle\n")
    (workspace / "a.py").write_text("needle\n")
    (workspace / ".paicliignore").write_text("fixtures/\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    assert await grep(ctx, "needle") == "a.py (1 match)\n  1: needle"


@pytest.mark.parametrize(
    ("pattern", "said"),
    [(r"(a)\1", "backreferences"), (r"foo(?=bar)", "lookahead"), (r"(?<!x)y", "lookbehind"), (r"a\nb", "one line")],
)
async def test_what_re2_cannot_do_is_a_clear_error(workspace: Path, ctx: ToolContext, pattern: str, said: str) -> None:
    with pytest.raises(ToolFailure, match=said):
        await grep(ctx, pattern)


def test_the_description_names_the_syntax() -> None:
    assert (
        "RE2" in GrepCode.description
        and "RE2" in GrepCode.spec()["function"]["parameters"]["properties"]["pattern"]["description"]
    )


async def test_a_catastrophic_pattern_returns_at_once(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("a" * 60 + "!\n")
    start = time.perf_counter()
    assert "no matches" in await grep(ctx, "(a|aa)+$")
    assert time.perf_counter() - start < 1


async def test_patterns_never_match_across_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("foo\nbar\n\nbaz\n")
    assert await grep(ctx, r"foo\s*bar") == "no matches for 'foo\\\\s*bar' in ."
    assert await grep(ctx, r"^$") == "a.txt (1 match)\n  3: "


def test_a_file_deleted_between_listing_and_reading_is_skipped(workspace: Path) -> None:
    (workspace / "a.txt").write_text("needle\n")
    (workspace / "b.txt").write_text("needle\n")
    pattern = compile_pattern("needle")
    chosen = select(workspace, ["a.txt", "b.txt", "gone.txt"])
    assert chosen.regular == ["a.txt", "b.txt"]
    (workspace / "a.txt").unlink()
    hits = read_hits(workspace, chosen.regular, pattern, 5, threading.Event())
    assert [hit.path for hit in hits] == ["b.txt"]


def test_a_cancelled_search_stops_before_the_next_file(workspace: Path) -> None:
    (workspace / "a.txt").write_text("needle\n")
    cancelled = threading.Event()
    cancelled.set()
    assert read_hits(workspace, ["a.txt"], compile_pattern("needle"), 5, cancelled) == []
