"""grep_code's fast path: rg walks the folder itself while the lister lists it, and the listing judges.

Handing rg the listed files by name makes it slower than GNU grep over the same tree; walking, it is not.
rg walks with none of its own ignore rules (`--no-ignore`: they are not git's in every case, and a file
it skipped that git lists would be missed), without following symlinks, without its config, dot-files
included, leaving out:

- what git says is ignored and untracked (`git ls-files --others --ignored --exclude-standard
  --directory`: whole folders where git stops at the folder), each as an anchored `!/path` glob, only for
  paths of plain characters (a glob of any other name could match more than that path), up to
  `EXCLUDE_BYTES` of them;
- `.git` (file or folder) and names with a line break (rg's output would be ambiguous);
- with a `glob` of plain characters and `*` (`*.py`, `test_*`), the other file names.

So rg reads a superset of the listing, minus exactly those paths. Its hits are kept for the listed
regular files only (the lister is the judge: a path rg found that the model's view leaves out is
dropped), and a listed file the walk left out (a tracked file in an ignored folder, a name with a line
break) is searched as before, by name (paicli/tools/grep_search.py), as are symlinks; a large file rg
reported keeps its lines when it holds no NUL byte now. Outside a git repository (git's ignored paths
unknown) everything goes by name, as before.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.file_kinds import FOLDER_FLAGS, MAX_FILE_BYTES, Selection, TextKey
from paicli.tools.git_listing import SharedGit
from paicli.tools.grep_hits import FileHits, RgOutput
from paicli.tools.grep_search import (
    RG_OPTIONS,
    large_in,
    off_loop,
    rg_text_hits,
    run_rg,
    search,
)
from paicli.tools.listing_memo import ListingMemo
from paicli.tools.regex_syntax import LinePattern, for_ripgrep

EXCLUDE_BYTES = 256 * 1024  # exclusion globs given to rg; git's ignored paths beyond that are walked
PLAIN_PATH = re.compile(r"[A-Za-z0-9._+@%=,~ /-]+", re.ASCII)  # nothing a glob reads as special
PLAIN_NAME_GLOB = re.compile(r"[A-Za-z0-9._+@%=,~-]*\*[A-Za-z0-9._+@%=,~*-]*", re.ASCII)
WALK_OPTIONS = (
    "--binary",  # a binary file is reported as for a named file ("binary file matches"), not cut short
    f"--max-filesize={MAX_FILE_BYTES}",
    "--glob=!.git",
    "--glob=!*\n*",
    "--glob=!*\r*",
)


@dataclass(frozen=True)
class Scope:
    """What grep_code was asked to search: a folder (relative posix path, "" for the workspace), a glob
    on file names or paths, and whether ignored files count. `walk` false: no walk (one file is searched)."""

    folder: str = ""
    glob: str | None = None
    include_ignored: bool = False
    walk: bool = True


@dataclass
class Found:
    hits: list[FileHits]
    engine: str  # "rg walk", "rg" (files by name), "re2" (in process)
    too_large: int


@dataclass(frozen=True)
class _Walked:
    hits: dict[str, FileHits]
    excluded: frozenset[str] = field(default_factory=frozenset)  # paths left out; a folder ends with "/"
    sized: dict[str, TextKey] = field(default_factory=dict)  # the large ones among the files rg named


async def search_tree(
    root: Path,
    scope: Scope,
    choose: Callable[[], Selection],
    pattern: LinePattern,
    keep: int,
    rg: str | None,
    git: SharedGit | None = None,
    memo: ListingMemo | None = None,
) -> Found:
    """The hits below `scope` in the files `choose()` selects (run in a thread meanwhile): by rg's walk
    where it can run, else by file name or in process. An exception of `choose` stops the search. `git`:
    the git of this run, shared with `choose` (one configuration look-up, one question for the ignored
    paths). `memo`: the session's listings, whose last answer of git for the ignored paths the walk takes
    (see `_walk`)."""
    git = git if git is not None else SharedGit(root)
    verdicts = memo.texts if memo is not None else None
    walking = None
    if rg and _walkable(scope):
        walking = asyncio.ensure_future(_walk(rg, root, scope, pattern, keep, git, memo))
    try:
        chosen = await off_loop(choose)
        walked = await walking if walking is not None else None
    finally:
        if walking is not None and not walking.done():
            walking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await walking
    if walked is None:
        hits, engine = await search(root, chosen, pattern, keep, rg, verdicts)
        return Found(hits, engine, chosen.too_large)
    regular = set(chosen.regular)
    rg_found = {path: hits for path, hits in walked.hits.items() if path in regular}
    kept = await rg_text_hits(root, rg_found, verdicts, walked.sized)
    missed = _missed(chosen.regular, walked.excluded)
    rest = Selection(regular=missed, links=chosen.links)
    more, _ = await search(root, rest, pattern, keep, rg, verdicts)
    return Found(sorted([*kept, *more], key=lambda hits: hits.path), "rg walk", chosen.too_large)


def _walkable(scope: Scope) -> bool:
    return scope.walk and "\n" not in scope.folder and "\r" not in scope.folder and not scope.folder.startswith("-")


def _missed(paths: Sequence[str], excluded: frozenset[str]) -> list[str]:
    """The listed regular files of `paths` (sorted) rg's walk leaves out (the name glob aside: the listing
    is filtered by the same glob): those under an excluded folder or excluded themselves (a tracked file in
    an ignored folder, or a stale memo of git's answer), names with a line break, and anything named `.git`
    or inside such a folder. Looked up by bisection and one scan of the names joined: a listing of tens of
    thousands of files costs a millisecond, not one Python step per file."""
    missed: set[str] = set()
    for entry in excluded:
        start = bisect.bisect_left(paths, entry)
        if entry.endswith("/"):  # every path that starts with it: up to the folder name followed by "0"
            missed.update(paths[start : bisect.bisect_left(paths, entry[:-1] + "0", start)])
        elif start < len(paths) and paths[start] == entry:
            missed.add(entry)
    joined = "\0" + "\0".join(paths) + "\0"
    if "\n" in joined or "\r" in joined or _names_git(joined):
        missed.update(path for path in paths if not _walkable_name(path))
    return sorted(missed)


def _names_git(joined: str) -> bool:
    """Whether a path of `joined` (NUL before, between and after them) has a part named `.git`: each
    ".git" in it (`.gitignore`, `.github`: a few hundred in a large repository) looked at in turn."""
    at = joined.find(".git")
    while at >= 0:
        if joined[at - 1] in "\0/" and joined[at + 4] in "\0/":
            return True
        at = joined.find(".git", at + 4)
    return False


def _walkable_name(path: str) -> bool:
    return "\n" not in path and "\r" not in path and ".git" not in path.split("/")


async def _walk(
    rg: str | None,
    root: Path,
    scope: Scope,
    pattern: LinePattern,
    keep: int,
    git: SharedGit,
    memo: ListingMemo | None = None,
) -> _Walked | None:
    """rg's hits over its walk of the scope's folder; None outside git, when rg fails or refuses, or when
    its output is not in the form grep_hits.py reads.

    git's ignored paths become rg's exclusions. Asking git for them is the one step before rg can start;
    with `memo`, the last answer is used at once (the listing made meanwhile, if one is, asks git again).
    A stale answer changes no result: a listed file under a path it excludes is searched by name
    (`_missed`), and a file it does not exclude that is ignored now is walked and dropped, as every hit of
    a file the listing does not name is."""
    assert rg is not None
    excluded: list[str] = []
    if not scope.include_ignored:
        ignored = memo.ignored(root) if memo is not None else None
        if ignored is None:
            _, ignored = await off_loop(git.ignored)  # never waited for at exit, as to_thread is
            if ignored is None:
                return None
        prefix = scope.folder + "/" if scope.folder else ""
        excluded = _plain_excludes(path for path in ignored if path.startswith(prefix))
    # A later glob wins over an earlier one: the name glob first, so that no exclusion is overridden.
    name_glob = [f"--glob={scope.glob}"] if scope.glob and PLAIN_NAME_GLOB.fullmatch(scope.glob) else []
    arguments = [*RG_OPTIONS, *name_glob, *WALK_OPTIONS, *(f"--glob=!/{path}" for path in excluded)]
    arguments += ["-e", for_ripgrep(pattern.source), "--", f"./{scope.folder}" if scope.folder else "."]
    parsed = RgOutput(keep)
    sized: dict[str, TextKey] = {}  # the large files among those rg names, looked at as they come

    def take(piece: bytes) -> None:
        parsed.feed(piece)
        sized.update(large_in(folder, parsed.take_new()))

    folder = os.open(root, FOLDER_FLAGS)
    try:
        if await run_rg(rg, root, arguments, take) is None:
            return None
        parsed.end()
        sized.update(large_in(folder, parsed.take_new()))
    finally:
        os.close(folder)
    if not parsed.understood:
        return None
    return _Walked(parsed.hits(), frozenset(excluded), sized)


def _plain_excludes(paths: Iterable[str]) -> list[str]:
    """The paths an anchored glob names exactly (folders first: they save the most), within EXCLUDE_BYTES."""
    plain = [path for path in paths if PLAIN_PATH.fullmatch(path) and not path.endswith(" ")]
    chosen: list[str] = []
    size = 0
    for path in sorted(plain, key=lambda path: (not path.endswith("/"), path)):
        size += len(path) + 10
        if size > EXCLUDE_BYTES:
            break
        chosen.append(path)
    return chosen
