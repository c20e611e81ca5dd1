"""grep's second part: grep_code beside GNU `grep -rn` in real repositories named by the environment
variable PAICLI_BENCH_GREP_REPOS (folders separated by ":"; fetched by hand, as `bench context`'s).

Each repository is searched for four patterns as a model searches: a rare identifier (the longest word of
the first tracked Python, JavaScript or TypeScript file), `import` (a line of almost every file), `TODO`
and `class \\w+Error`. grep_code runs as a session's first search (its own memo, nothing warmed) and as a
later one (the session's memo); GNU grep runs over the whole work tree (`.git` aside: issue 30's
yardstick, and the target) and told the folders git ignores at the top by `--exclude-dir`, which it also
applies deeper (it knows no .gitignore: the same search as grep_code's, reported beside). Rounds are
interleaved, medians reported.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from pathlib import Path

from bench.common import Result, median
from paicli.tools.base import ToolContext
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs
from paicli.tools.git_listing import SharedGit
from paicli.tools.listing_memo import ListingMemo

SOURCES = (".py", ".js", ".ts")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{11,}")


def real_repositories() -> list[Path]:
    named = os.environ.get("PAICLI_BENCH_GREP_REPOS", "")
    return [Path(os.path.realpath(folder)) for folder in named.split(":") if folder and Path(folder, ".git").exists()]


def patterns(root: Path) -> list[str]:
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=False).stdout
    rare = "handle_request"
    for name in tracked.splitlines():
        if name.endswith(SOURCES):
            words = WORD.findall((root / name).read_text(errors="replace"))
            if words:
                rare = max(words, key=len)
                break
    return [rare, "import", "TODO", r"class \w+Error"]


def gnu_grep(root: Path) -> list[str]:
    """GNU grep told the folders git ignores at the top (and `.git`), as grep_code's search."""
    _, ignored = SharedGit(root).ignored()
    top = sorted({path.rstrip("/") for path in ignored or [] if path.endswith("/") and path.count("/") == 1})
    return ["grep", "-rnE", "--exclude-dir=.git", *(f"--exclude-dir={name}" for name in top)]


WHOLE_TREE = ["grep", "-rnE", "--exclude-dir=.git"]  # issue 30's yardstick: GNU grep -rn over the same tree


def add_real(result: Result, root: Path, rounds: int) -> None:
    by_hand = gnu_grep(root)
    files = len(
        subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False).stdout.split(b"\0")
    )
    session = ListingMemo()
    asyncio.run(GrepCode().run(GrepCodeArgs(pattern="x"), ToolContext(workspace=root, listings=session)))
    session.settle()
    worst = {"first": 0.0, "later": 0.0, "by hand": 0.0}
    for pattern in patterns(root):
        first: list[float] = []
        later: list[float] = []
        whole: list[float] = []
        gnu: list[float] = []
        for _ in range(rounds):
            for memo, times in ((ListingMemo(), first), (session, later)):
                start = time.perf_counter()
                asyncio.run(GrepCode().run(GrepCodeArgs(pattern=pattern), ToolContext(workspace=root, listings=memo)))
                times.append(time.perf_counter() - start)
                memo.settle()
            for command, times in ((WHOLE_TREE, whole), (by_hand, gnu)):
                start = time.perf_counter()
                subprocess.run([*command, pattern, "."], cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
                times.append(time.perf_counter() - start)
        worst["first"] = max(worst["first"], median(first) / median(whole))
        worst["later"] = max(worst["later"], median(later) / median(whole))
        worst["by hand"] = max(worst["by hand"], median(later) / median(gnu))
        figures = " / ".join(f"{median(times) * 1000:,.0f}" for times in (first, later, whole, gnu)) + " ms"
        result.add(f"{root.name} ({files:,} files) {pattern!r}: first / later / GNU grep whole / by hand", figures)
    name = f"{root.name}: worst of the patterns,"
    result.add(f"{name} first search ÷ GNU grep over the whole tree", worst["first"], at_most=1.0)
    result.add(f"{name} later search ÷ GNU grep over the whole tree", worst["later"], at_most=1.0)
    result.add(f"{name} later search ÷ GNU grep with the ignored folders excluded by hand", worst["by hand"])
