"""16. grep: grep_code on a generated repository, with rg from PATH and with the search in process, beside GNU
`grep -rn` (issues 29 and 30).

The tree is a git repository of a few thousand Python-like files (4,000; 400 with --quick) in nested
folders, with a git-ignored `build/` folder holding as many files again, all full of the word searched for.
grep_code runs the tool itself, in this process (listing by git, file selection, reading, RE2, the report),
as the model calls it (the caps on); "rg" has rg on PATH, "in process" a PATH without it. GNU grep runs two
ways: over the whole work tree (`grep -rn PATTERN .`, `.git` aside: issue 30's yardstick, "GNU grep -rn
over the same tree") and told `--exclude-dir=build` by hand, so that it does no more than grep_code's
search (it knows no .gitignore). Rounds are interleaved, medians reported, with the load average (rg runs
on one thread when it is at least the number of cores). Checked besides the times, with every line shown
(the caps lifted): every engine finds the same matching lines, and no result names a path under `build/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.common import Result, median, rounded
from bench.grep_real import add_real, real_repositories
from paicli.tools.base import ToolContext
from paicli.tools.builtin import grep_code
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs
from paicli.tools.git_env import program_outside
from paicli.tools.grep_search import rg_threads
from paicli.tools.listing_memo import RACY_NS, ListingMemo

NAME = "grep"
TITLE = "grep_code: rg, in process, GNU grep"
PATTERN = r"def handle_\w+\(request"
WORDS = ["alpha", "beta", "gamma", "delta", "value", "item", "result", "config", "user", "data"]


def make_tree(root: Path, files: int, rng: random.Random) -> int:
    """The repository and how many lines match PATTERN outside build/."""
    matching = 0
    for n in range(files):
        name = f"pkg{n % 20:02d}/sub{n % 7}/module_{n}.py"
        lines = []
        for line in range(60):
            if rng.random() < 0.01:
                lines.append(f"def handle_{rng.choice(WORDS)}(request, {line}):")
                matching += 1
            else:
                lines.append(" ".join(rng.choices(WORDS, k=8)))
        for folder in ("", "build/"):
            path = root / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return matching


def settle(made: float) -> None:
    """Waits until the tree is as old as a real workspace's: written to disk, and past the 2 s in which the
    session's listing memo is not kept (a folder changed that recently may change again unseen)."""
    os.sync()
    time.sleep(max(0.0, made + RACY_NS / 1e9 + 0.5 - time.time()))


def tool_search(root: Path, memo: ListingMemo) -> str:
    return asyncio.run(GrepCode().run(GrepCodeArgs(pattern=PATTERN), ToolContext(workspace=root, listings=memo)))


def time_tool(root: Path, rounds: int, gnu_commands: list[list[str]]) -> tuple[list[float], ...]:
    """Seconds per round of grep_code as a session's first search (a memo of its own, nothing warmed) and
    as a later one (the session's memo, its stamps taken), then of each GNU grep command, in turn."""
    session = ListingMemo()
    tool_search(root, session)
    session.settle()
    times: tuple[list[float], ...] = tuple([] for _ in range(2 + len(gnu_commands)))
    for _ in range(rounds):
        for memo, seconds in ((ListingMemo(), times[0]), (session, times[1])):
            start = time.perf_counter()
            tool_search(root, memo)
            seconds.append(time.perf_counter() - start)
            memo.settle()
        for command, seconds in zip(gnu_commands, times[2:], strict=True):
            start = time.perf_counter()
            subprocess.run(command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL, check=False)
            seconds.append(time.perf_counter() - start)
    return times


def every_line(root: Path) -> str:
    """grep_code's output with every line shown, so that the outputs compare line for line."""
    saved_cap = grep_code.MAX_MATCHES
    grep_code.MAX_MATCHES = 1_000_000
    try:
        return tool_search(root, ListingMemo())
    finally:
        grep_code.MAX_MATCHES = saved_cap


@contextlib.contextmanager
def search_path(path_env: str) -> Iterator[None]:
    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = path_env
    try:
        yield
    finally:
        os.environ["PATH"] = saved


def reported_matches(output: str) -> int:
    """The matching lines grep_code counted: shown and left out."""
    total = 0
    for line in output.splitlines():
        if line.endswith(("match)", "matches)")) and not line.startswith(" "):
            total += int(line.rsplit("(", 1)[1].split()[0])
        elif line.startswith("... ") and "more matches in" in line:
            total += int(line.split()[1])
    return total


def run(quick: bool = False) -> Result:
    files = 400 if quick else 4000
    rounds = 2 if quick else 5
    result = Result(NAME, TITLE)
    load_before = os.getloadavg()[0]
    threads = "one" if rg_threads() else "rg's choice"
    whole = ["grep", "-rnE", "--exclude-dir=.git", PATTERN, "."]
    by_hand = ["grep", "-rnE", "--exclude-dir=build", "--exclude-dir=.git", PATTERN, "."]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(os.path.realpath(folder))
        matching = make_tree(root, files, random.Random(30))
        if not quick:
            settle(time.time())
        no_rg = root.parent / f"{root.name}-bin"
        no_rg.mkdir()
        try:
            git = shutil.which("git")
            if git:
                (no_rg / "git").symlink_to(git)
            with search_path(str(no_rg)):
                _, fallback = time_tool(root, max(1, rounds // 2), [])
                fallback_out = every_line(root)
        finally:
            shutil.rmtree(no_rg, ignore_errors=True)
        rg = program_outside("rg", root, os.environ.get("PATH", ""))
        rg_first, with_rg, gnu_whole, gnu = time_tool(root, rounds, [whole, by_hand])  # in process without rg
        rg_out = every_line(root) if rg else ""
        done = subprocess.run(by_hand, cwd=root, capture_output=True, check=False)
        gnu_found = len(done.stdout.splitlines())
    load_after = os.getloadavg()[0]
    found = reported_matches(fallback_out)
    leaked = sum(1 for line in (fallback_out + "\n" + rg_out).splitlines() if line.startswith("build/"))
    result.details = {
        "files": files,
        "ignored_files": files,
        "matching_lines": matching,
        "in_process_s": [rounded(s) for s in fallback],
        "rg_s": [rounded(s) for s in with_rg],
        "rg_first_s": [rounded(s) for s in rg_first],
        "gnu_grep_s": [rounded(s) for s in gnu],
        "gnu_grep_whole_tree_s": [rounded(s) for s in gnu_whole],
        "rg": rg or "",
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "cores": os.cpu_count() or 1,
    }
    result.add("files searched (and as many git-ignored)", files)
    load = f"{load_before:.1f} / {load_after:.1f} on {os.cpu_count()} cores"
    result.add("load average (1 min), before / after", load)
    result.add("rg threads at the start", threads)
    result.add("grep_code, in process, later search: median", median(fallback) * 1000, "ms")
    if rg:
        result.add("grep_code, rg, a session's first search: median", median(rg_first) * 1000, "ms")
        result.add("grep_code, rg, a later search: median", median(with_rg) * 1000, "ms")
        result.add("rg and in process give the same output", "yes" if rg_out == fallback_out else "NO")
    else:
        result.add("grep_code, rg from PATH", "not run: no rg on PATH")
    result.add("GNU grep -rn over the whole work tree: median", median(gnu_whole) * 1000, "ms")
    result.add("GNU grep -rn, build/ excluded by hand: median", median(gnu) * 1000, "ms")
    if rg:
        result.add("later search ÷ GNU grep over the whole tree", median(with_rg) / median(gnu_whole), at_most=1.0)
        result.add("later search ÷ GNU grep with build/ excluded by hand", median(with_rg) / median(gnu))
    result.add("matching lines found by grep_code", found)
    result.add("matching lines found by GNU grep", gnu_found)
    result.add("matching lines in the tree", matching)
    result.add("results under the git-ignored build/", leaked, at_most=0)
    for repository in real_repositories():
        add_real(result, repository, rounds)
    return result
