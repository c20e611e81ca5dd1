"""grep's second part: grep_code beside GNU `grep -rn` in real repositories named by the environment
variable PAICLI_BENCH_GREP_REPOS (folders separated by ":"; fetched by hand, as `bench context`'s).

Each repository is searched for four patterns as a model searches: a rare identifier (the longest word of
the first tracked Python, JavaScript or TypeScript file), `import` (a line of almost every file), `TODO`
and `class \\w+Error`. grep_code runs as a session's first search (its own memo, nothing warmed) and as a
later one (the session's memo); GNU grep is told the folders git ignores at the top (and `.git`) by
`--exclude-dir`, which it also applies deeper (it knows no .gitignore). Rounds are interleaved, medians
reported, and the later searches' target is GNU grep's time.
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
    _, ignored = SharedGit(root).ignored()
    top = sorted({path.rstrip("/") for path in ignored or [] if path.endswith("/") and path.count("/") == 1})
    return ["grep", "-rnE", "--exclude-dir=.git", *(f"--exclude-dir={name}" for name in top)]


def add_real(result: Result, root: Path, rounds: int) -> None:
    grep = gnu_grep(root)
    files = len(
        subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False).stdout.split(b"\0")
    )
    session = ListingMemo()
    asyncio.run(GrepCode().run(GrepCodeArgs(pattern="x"), ToolContext(workspace=root, listings=session)))
    session.settle()
    ratios = []
    for pattern in patterns(root):
        first: list[float] = []
        later: list[float] = []
        gnu: list[float] = []
        for _ in range(rounds):
            for memo, times in ((ListingMemo(), first), (session, later)):
                start = time.perf_counter()
                asyncio.run(GrepCode().run(GrepCodeArgs(pattern=pattern), ToolContext(workspace=root, listings=memo)))
                times.append(time.perf_counter() - start)
                memo.settle()
            start = time.perf_counter()
            subprocess.run([*grep, pattern, "."], cwd=root, capture_output=True, stdin=subprocess.DEVNULL, check=False)
            gnu.append(time.perf_counter() - start)
        ratios.append(median(later) / median(gnu))
        figures = f"{median(first) * 1000:,.0f} / {median(later) * 1000:,.0f} / {median(gnu) * 1000:,.0f} ms"
        result.add(f"{root.name} ({files:,} files) {pattern!r}: first / later / GNU grep", figures)
    result.add(f"{root.name}: later search ÷ GNU grep, worst of the patterns", max(ratios), at_most=1.0)
