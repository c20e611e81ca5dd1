"""Which files change together, from the workspace's git history: the map's last widening (rank.py).

The latest `HISTORY_COMMITS` non-merge commits of HEAD (`git log --name-only`, run as the file lister runs
git: nothing a repository's config names is run), each changing at most `MAX_COMMIT_FILES` files (a wider
one is a sweep, not a change of related files), paths relative to the workspace. Kept: how often each
file changed, and the pairs of files that changed together at least `MIN_TOGETHER` times. Bounded by
the commit count: at most 1,000 × 20 × 19 pairs counted, far fewer kept.

Measured (bench context, 39 commits of mypy and 40 of babel): with a linked file given `COCHANGE_SHARE`
of its seed's score times the share of the seed's changes it was part of (rank.py), recall went from 0.855 /
0.952 / 0.985 to 0.873 / 0.969 / 0.985 on mypy and from 0.636 / 0.687 / 0.757 to 0.652 / 0.705 / 0.758 on
babel (at 1,000 / 3,000 / 6,000 tokens; BENCHMARKS.md).
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.file_lister import git_output
from paicli.tools.git_listing import SharedGit

HISTORY_COMMITS = 1_000
MAX_COMMIT_FILES = 20
MIN_TOGETHER = 2
COMMIT_MARK = "\x01"


@dataclass(frozen=True)
class History:
    head: str  # the commit it was read at
    changes: Counter[str] = field(default_factory=Counter)  # path → commits that changed it
    together: dict[tuple[str, str], int] = field(default_factory=dict)  # (a, b) and (b, a) → commits


def head_of(workspace: Path) -> str | None:
    """HEAD's commit id, None outside git or in a repository without commits."""
    # rev-parse runs nothing a configuration names: the listing's git (no `git config` look-up first)
    output = git_output(workspace, ["rev-parse", "--verify", "-q", "HEAD"], git=SharedGit(workspace))
    return output.decode("ascii", "replace").strip() if output else None


def read_history(workspace: Path, head: str, commits: int = HISTORY_COMMITS) -> History:
    """The files that changed together in the latest `commits` commits before and at `head`."""
    arguments = ["log", head, "--no-merges", "-n", str(commits), "--format=%x01", "--name-only"]
    options = ["--relative", "--no-renames", "--no-show-signature", "--no-ext-diff", "--no-textconv", "-z"]
    output = git_output(workspace, [*arguments, *options])
    history = History(head)
    pairs: Counter[tuple[str, str]] = Counter()
    for entry in os.fsdecode(output or b"").split(COMMIT_MARK)[1:]:
        files = sorted({name.strip("\n") for name in entry.split("\0") if name.strip("\n")})
        if not files or len(files) > MAX_COMMIT_FILES:
            continue
        history.changes.update(files)
        pairs.update(itertools.permutations(files, 2))
    history.together.update((pair, count) for pair, count in pairs.items() if count >= MIN_TOGETHER)
    return history
