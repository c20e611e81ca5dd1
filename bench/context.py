"""Planner context (issue 30): how many of the files a commit changed does the planner's request name?

For recent non-merge commits of a repository (1 to 20 changed files, a message of at least 5 words), the
work tree is checked out at the commit's PARENT and the commit's message is the goal. Recall is the share
of the changed files that exist at the parent whose full path appears verbatim in the text, averaged over
the commits. At each budget (1,000, 3,000 and 6,000 tokens, paicli's estimate: 4 ASCII characters a
token, paicli/llm/tokens.py) it compares:

- map: the planner's request as paicli sends it (system prompt, goal, repository map);
- bm25: paths ranked by plain BM25 over the file contents (no path or symbol words, no links), listed
  until the budget is spent;
- churn: goal-blind, the files changed most often in the 1,000 commits before the parent;
- overview: the overview the planner had before the map (the first 300 entries of a sorted walk), whole.

Also: the index's first build, its update after a few files change (three files edited in place), and
the planner's request size in characters (median).

Full mode reads the clones named in PAICLI_BENCH_CONTEXT_REPOS (colon-separated local paths; clone them
first, e.g. `git clone https://github.com/python/mypy`): their work trees are checked out at each
parent (use scratch clones). PAICLI_BENCH_CONTEXT_COMMITS sets how many commits (default 30). Quick
mode builds a small repository with a scripted history, offline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.common import Result, median
from paicli.agent.context import system_prompt, workspace_overview
from paicli.common.events import NullSink
from paicli.llm.tokens import CHARS_PER_TOKEN, estimate_text
from paicli.repomap.files import watched_files, workspace_files
from paicli.repomap.index import Index
from paicli.repomap.rank import bm25
from paicli.repomap.repo_map import RepoMap
from paicli.repomap.words import words
from paicli.tools.watched_listing import WatchedListings

NAME = "context"
TITLE = "Planner context: the repository map"
BUDGETS = (1_000, 3_000, 6_000)
DEFAULT_BUDGET = 3_000
METHODS = ("map", "bm25", "churn", "overview")
INSTRUCTION = "Reply with only the plan, as one JSON object."


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def commits(repo: Path, count: int) -> list[tuple[str, str, list[str]]]:
    """(sha, message, changed paths) of the latest qualifying commits, newest first."""
    log = git(repo, "log", "--no-merges", "-n", str(count * 8), "--format=%x01%H%x02%B%x02", "--name-only")
    found = []
    for entry in log.split("\x01")[1:]:
        sha, message, names = entry.split("\x02")
        changed = [line for line in names.splitlines() if line.strip()]
        if 1 <= len(changed) <= 20 and len(message.split()) >= 5:
            found.append((sha, message.strip(), changed))
        if len(found) == count:
            break
    return found


def mentioned(path: str, text: str) -> bool:
    return re.search(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-])", text) is not None


def paths_within(paths: list[str], budget: int) -> str:
    """As many of `paths` as fit in `budget` tokens, one a line: the estimate of the whole text, as the
    map counts its own (a sum of estimates per line would round each line up and list fewer)."""
    lines: list[str] = []
    ascii_chars, other = -1, 0  # the first line has no line break before it
    for path in paths:
        more = len(path.encode("ascii", "ignore")) + 1
        if -(-(ascii_chars + more) // CHARS_PER_TOKEN) + other + len(path) + 1 - more > budget:
            break
        lines.append(path)
        ascii_chars, other = ascii_chars + more, other + len(path) + 1 - more
    return "\n".join(lines)


def churn(repo: Path, parent: str) -> list[str]:
    names = git(repo, "log", parent, "--no-merges", "-n", "1000", "--format=", "--name-only").split()
    return [path for path, _ in Counter(names).most_common()]


def evaluate(repo: Path, count: int, home: Path) -> dict[str, object]:
    tip = git(repo, "rev-parse", "HEAD").strip()
    chosen = commits(repo, count)
    recalls: dict[str, list[float]] = {f"{m}@{b}": [] for m in METHODS for b in BUDGETS}
    request_chars: list[int] = []
    first_build = update_after_edit = update_new_process = 0.0
    plain = Index(repo, home / "plain", workspace_files, NullSink(), weights=(0, 0))
    listings = WatchedListings()  # the session's (paicli/runtime.py): the map's listing, watched
    repo_map = RepoMap(repo, home, NullSink(), lister=watched_files(listings))
    for position, (sha, message, changed) in enumerate(chosen):
        git(repo, "checkout", "-q", "--force", "--detach", f"{sha}^")
        at_parent = [path for path in changed if (repo / path).is_file()]
        if not at_parent:
            continue
        started = time.perf_counter()
        while repo_map.index.update().pending:  # the first build may take more than one update's budget
            pass
        if position == 0:
            first_build = time.perf_counter() - started
            repo_map.index.update()  # as a session's next plan: the watch is in place (made after a checkout
            # settles, tools/watched_listing.py)
            update_after_edit, update_new_process = edited_update(repo, repo_map.index, at_parent)
        while plain.update().pending:
            pass
        system = system_prompt("planner", repo, home)
        ranked_plain = sorted(bm25(plain, words(message)).items(), key=lambda item: -item[1])
        by_churn = churn(repo, f"{sha}^")
        overview = workspace_overview(repo)
        for budget in BUDGETS:
            text = repo_map.for_goal(message, map_tokens=budget).text
            request = f"{system}\n# Goal\n\n{message}\n\n{text}\n\n{INSTRUCTION}"
            if budget == DEFAULT_BUDGET:
                request_chars.append(len(request))
            texts = {
                "map": request,
                "bm25": paths_within([p for p, _ in ranked_plain], budget),
                "churn": paths_within([p for p in by_churn if (repo / p).is_file()], budget),
                "overview": overview,
            }
            for method, shown in texts.items():
                found = sum(mentioned(path, shown) for path in at_parent)
                recalls[f"{method}@{budget}"].append(found / len(at_parent))
    repo_map.close()
    listings.close()
    plain.close()
    git(repo, "checkout", "-q", "--force", tip)
    return {
        "files": len(workspace_files(repo).files),
        "commits": len(recalls["map@1000"]),
        "recall": {key: round(sum(v) / len(v), 3) if v else 0.0 for key, v in recalls.items()},
        "first_build_s": round(first_build, 2),
        "update_after_edit_ms": round(update_after_edit * 1000, 1),
        "update_new_process_ms": round(update_new_process * 1000, 1),
        "request_chars_median": int(median(request_chars)) if request_chars else 0,
        "overview_tokens": estimate_text(workspace_overview(repo)),
    }


def edited_update(repo: Path, index: Index, paths: list[str], rounds: int = 5) -> tuple[float, float]:
    """Seconds of an index update after three files are edited (each gets a line more), then restored: the
    median of `rounds` in this process (the rows kept from the previous update, the session's watched
    listing), and of a new Index listing afresh (as a new paicli process opens it)."""
    edited = paths[:3]
    warm: list[float] = []
    cold: list[float] = []
    for round_number in range(rounds * 2):
        for path in edited:
            with open(repo / path, "a", encoding="utf-8") as file:
                file.write("\n# edited by bench context\n")
        fresh = Index(repo, index.folder, workspace_files, NullSink()) if round_number % 2 else None
        started = time.perf_counter()
        (fresh or index).update()
        (cold if fresh else warm).append(time.perf_counter() - started)
        if fresh is not None:
            fresh.close()
        git(repo, "checkout", "-q", "--", *edited)
        index.update()
    return median(warm), median(cold)


def generated_repo(folder: Path) -> Path:
    """200 modules in 10 packages, and 6 commits each changing two related files, with a message."""
    git(folder.parent, "init", "-q", str(folder))
    git(folder, "config", "user.email", "bench@example.com")
    git(folder, "config", "user.name", "bench")
    topics = ["invoice", "shipping", "refund", "coupon", "ledger", "payroll", "audit", "tariff", "rebate", "escrow"]
    for p, topic in enumerate(topics):
        for n in range(20):
            path = folder / f"pkg_{p}" / f"{topic}_{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"def {topic}_step_{n}(value: int) -> int:\n    return value + {n}\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "the first version of every module")
    for c, topic in enumerate(topics[:6]):
        for n in (c, c + 7):
            with open(folder / f"pkg_{c}" / f"{topic}_{n}.py", "a", encoding="utf-8") as file:
                file.write(f"\n\ndef {topic}_check_{n}() -> bool:\n    return True\n")
        git(folder, "commit", "-qam", f"Check the {topic} step {c} and {topic} step {c + 7} before they run")
    return folder


def run(quick: bool = False) -> Result:
    result = Result(NAME, TITLE)
    scratch = Path(tempfile.mkdtemp(prefix="paicli-bench-context-"))
    try:
        if quick:
            repos = [generated_repo(scratch / "generated")]
        else:
            repos = [Path(p) for p in os.environ.get("PAICLI_BENCH_CONTEXT_REPOS", "").split(":") if p]
        if not repos:
            result.details["problem"] = "no repositories: set PAICLI_BENCH_CONTEXT_REPOS (see bench/context.py)"
            result.add("repositories", 0)
            return result
        for repo in repos:
            count = 6 if quick else int(os.environ.get("PAICLI_BENCH_CONTEXT_COMMITS", "30"))
            figures = evaluate(repo, count, scratch / f"home-{repo.name}")
            result.details[repo.name] = figures
            add_figures(result, repo.name, figures)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def add_figures(result: Result, name: str, figures: dict[str, object]) -> None:
    recall = figures["recall"]
    assert isinstance(recall, dict)
    label = f"{name} ({figures['files']:,} files, {figures['commits']} commits)"
    for budget in BUDGETS:
        target = {"at_least": 0.9} if budget == DEFAULT_BUDGET else {}
        result.add(f"{label}: map recall @{budget}", recall[f"map@{budget}"], **target)  # type: ignore[arg-type]
        for method in ("bm25", "churn"):
            result.add(f"{label}: {method} recall @{budget}", recall[f"{method}@{budget}"])
    result.add(f"{label}: overview recall (300 entries)", recall["overview@3000"])
    result.add(f"{label}: first index build", float(figures["first_build_s"]), "s")  # type: ignore[arg-type]
    edit = float(figures["update_after_edit_ms"])  # type: ignore[arg-type]
    result.add(f"{label}: index update after 3 files changed (median)", edit, "ms", at_most=100)
    cold = float(figures["update_new_process_ms"])  # type: ignore[arg-type]
    result.add(f"{label}: the same, the index opened anew (median)", cold, "ms")
    chars = int(figures["request_chars_median"])  # type: ignore[call-overload]
    result.add(f"{label}: planner request (median)", chars, "chars", at_most=20_000)
