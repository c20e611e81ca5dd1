"""The session's memo of the model's view of a workspace: the listing (file_lister.py, not checked against
the work tree) and each listed file's kind, kept while nothing it was made from has changed, so that a
search (grep_code, glob_files) after the first one in a session does not wait for git's listing and a
`stat` of every file.

What a listing depends on is stamped (change time, inode, device; or "absent") when the memo is made, and
checked, one `lstat` each, before it is used again:

- every folder git walks for untracked files: the workspace's folders except `.git` and those git says are
  ignored as a whole (a folder holding a tracked file is walked, as git walks it). Adding, removing or
  renaming an entry changes its folder's change time, and so does replacing a file with a symlink;
- each repository's git folder (`.git`, or the one a `.git` file names): git writes its index by renaming
  a new one into it, which changes the folder's change time; and its `index`, `config`, `info/exclude`,
  those of the common folder a linked worktree names;
- the rules: every `.gitignore` in the walked folders, `.paicliignore`, the user's global git config and
  excludes file at their default places.

No unprivileged process can set a change time, so a command cannot make a changed folder look unchanged.
Timestamps are coarse: a memo is kept only when every stamp is older than RACY_NS before its making began
(sandbox/folders.py, git's "racily clean" rule), which also covers a change made while it was being made.
Outside git (no ignored folders known) nothing is kept.

Kinds (file or symlink) follow the folders' stamps. Sizes change in place: the memo's are used only for
the count of files too large to search ("as when the listing was made"); every reader checks the size of
what it reads. Not stamped (docs/security.md): a global excludes file at a place the user's config names.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from paicli.sandbox.folders import RACY_NS
from paicli.tools.file_kinds import Selection, TextVerdicts, select
from paicli.tools.file_lister import PAICLI_IGNORE, list_files
from paicli.tools.git_listing import SharedGit
from paicli.tools.walked import Stamp, stamp, user_git_files, walked

MAX_STAMPS = 50_000  # a workspace of more folders is listed afresh each time: checking would cost as much
MAX_WORKSPACES = 8


@dataclass(frozen=True)
class Remembered:
    """The model's view of a workspace and its files sorted by kind."""

    files: tuple[str, ...]
    regular: tuple[str, ...]
    links: tuple[str, ...]
    oversized: tuple[str, ...]  # regular files over the size limit when the memo was made

    @functools.cached_property
    def present(self) -> tuple[str, ...]:
        """The listed files that were there when the memo was made (a tracked file deleted since is not),
        sorted: what the full listing names (`list_files`), for glob_files."""
        return tuple(sorted([*self.regular, *self.links, *self.oversized]))

    def selection(self, keep: Callable[[str], bool]) -> Selection:
        """The files `keep` names, sorted out as `select` would (sizes as when the memo was made)."""
        return Selection(
            regular=[path for path in self.regular if keep(path)],
            links=[path for path in self.links if keep(path)],
            oversized=[path for path in self.oversized if keep(path)],
        )


class ListingMemo:
    """Remembered listings by workspace, each used while its stamps hold (see the module docstring)."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock  # now, in ns since the epoch (the timestamps' clock)
        self._kept: dict[Path, tuple[tuple[Stamp, ...], Remembered]] = {}
        self._ignored: dict[Path, list[str]] = {}  # git's last answer, kept or not
        self._stamping: dict[Path, threading.Thread] = {}
        self._warming: dict[Path, threading.Thread] = {}
        self._lock = threading.Lock()
        self.texts = TextVerdicts(clock)  # whether the large files searched are text, for grep_code
        self.made = 0  # listings made, not taken from the memo (for tests and the benchmark)

    def view(self, root: Path, git: SharedGit) -> Remembered | None:
        """The model's view of `root` (a real path), remembered or made now; None outside git."""
        kept = self._kept.get(root)
        if kept is not None and _unchanged(kept[0]):
            return kept[1]
        self._kept.pop(root, None)
        return self._make(root, git)

    def warm(self, workspace: Path) -> None:
        """Makes the workspace's listing in a daemon thread (while the user types, the model or the planner
        thinks), unless the remembered one still holds (checked there too), so that a search is as quick
        as when nothing changed; nobody waits for it. One warm-up at a time per workspace."""
        root = Path(os.path.realpath(workspace))
        with self._lock:
            if root in self._warming or root in self._stamping:
                return
            thread = threading.Thread(target=self._warm, args=(root,), name="paicli-listing", daemon=True)
            self._warming[root] = thread
        thread.start()

    def _warm(self, root: Path) -> None:
        try:
            with contextlib.suppress(Exception):  # a failure here is the first search's to report
                self.view(root, SharedGit(root))
        finally:
            with self._lock:
                self._warming.pop(root, None)

    def ignored(self, root: Path) -> list[str] | None:
        """git's ignored untracked paths as the last listing found them (grep's walk leaves them out)."""
        return self._ignored.get(root)

    def _make(self, root: Path, git: SharedGit) -> Remembered | None:
        started = self.clock()
        asked, ignored = git.ignored()  # perhaps asked a moment before by the run's other thread: from then on
        started -= max(time.time_ns() - asked, 0)
        if ignored is None:
            return None
        if len(self._ignored) >= MAX_WORKSPACES:
            self._ignored.clear()
        self._ignored[root] = ignored
        listing = list_files(root, git=git, worktree=False)
        chosen = select(root, listing.files)
        remembered = Remembered(listing.files, tuple(chosen.regular), tuple(chosen.links), tuple(chosen.oversized))
        if root not in self._stamping:  # the walk for the stamps is not waited for: the next search uses them
            thread = threading.Thread(
                target=self._keep, args=(root, ignored, remembered, started), name="paicli-stamps", daemon=True
            )
            self._stamping[root] = thread
            thread.start()
        self.made += 1
        return remembered

    def settle(self) -> None:
        """Waits for the warm-ups and the stamps being taken (for tests and the benchmark)."""
        for threads in (self._warming, self._stamping):
            for thread in list(threads.values()):
                thread.join()

    def _keep(self, root: Path, ignored: list[str], remembered: Remembered, started: int) -> None:
        """Keeps `remembered` with the stamps of what it was made from, unless one is newer than RACY_NS
        before `started`: changed since the listing began, or too close to it to tell (taking the stamps
        after the listing is safe for that reason)."""
        try:
            stamps = _stamps(root, ignored, remembered.files)
            if stamps is not None and all(taken[1] is None or taken[1] < started - RACY_NS for taken in stamps):
                if len(self._kept) >= MAX_WORKSPACES:
                    self._kept.clear()
                self._kept[root] = (stamps, remembered)
        finally:
            self._stamping.pop(root, None)


def _unchanged(stamps: Sequence[Stamp]) -> bool:
    return all(stamp(old[0]) == old for old in stamps)


def _stamps(root: Path, ignored: Sequence[str], files: Sequence[str]) -> tuple[Stamp, ...] | None:
    """The stamps of what the listing depends on; None when there are more than MAX_STAMPS."""
    skipped = {path[:-1] for path in ignored if path.endswith("/")}
    paths = [str(root / PAICLI_IGNORE), *user_git_files()]
    for _kind, path in walked(str(root), skipped, files):
        paths.append(path)
        if len(paths) > MAX_STAMPS:
            return None
    return tuple(stamp(path) for path in paths)
