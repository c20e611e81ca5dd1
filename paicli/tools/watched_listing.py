"""The model's view of a workspace kept up to date by watching its folders, for the repository index.

The index asks for the listing before each map (every plan and replan); on a large repository git's own
listing is most of that time (babel, 27,674 files: 0.25 s quiet, over a second under load), because
it walks every folder for untracked files and stats every tracked one. A session instead lists once,
watches the folders that listing depends on (tree_watch.py: the folders git walks, and the repository's
git folders), and afterwards asks git only about the paths that changed (`file_lister.relist`).

It lists afresh, and keeps no watch, where a watch could not tell it everything: a workspace that is
not the top of its repository, one holding other repositories or submodules, outside git, or where no
watch can be kept (tree_watch.TreeWatch.start). It lists afresh, keeping the watch, when git's index
changed (`git add`, `git status` refreshing it, a commit); it lists afresh and watches anew when the
rules may have changed (a `.gitignore`, `.paicliignore`, the repository's `info/exclude` or config, the
user's git config or excludes file at their default places: these decide which folders are watched) or
when the watch says it may have missed something.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from paicli.sandbox.folders import RACY_NS
from paicli.tools.file_lister import PAICLI_IGNORE, Listing, list_files, relist
from paicli.tools.git_listing import SharedGit
from paicli.tools.tree_watch import TreeWatch
from paicli.tools.walked import Stamp, git_folders, stamp, user_git_files, walked

MAX_CHANGED = 1_000  # more changed paths than this: list afresh (git's arguments stay short)
MAX_WORKSPACES = 8
RETRY_NS = 60 * 10**9  # where no watch could be made, how long a session lists afresh before trying again
# Names in a git folder that do not change what is listed (refs, logs, objects, messages, locks)
GIT_NOISE = frozenset(
    {
        "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "AUTO_MERGE",
        "BISECT_LOG", "BISECT_START", "BISECT_TERMS", "BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK",
        "COMMIT_EDITMSG", "MERGE_MSG", "MERGE_MODE", "SQUASH_MSG", "TAG_EDITMSG", "packed-refs", "refs",
        "logs", "objects", "hooks", "description", "branches", "rebase-merge", "rebase-apply", "sequencer",
        "gc.pid", "gc.log", "shallow",
    }
)  # fmt: skip
GIT_INDEX = "index"


@dataclass
class _Watched:
    listing: Listing
    watch: TreeWatch | None  # None: listed afresh each time
    user_files: tuple[Stamp, ...]
    retry_at: int = 0  # without a watch: when to try to make one again (the clock's ns)


class WatchedListings:
    """The model's view of workspaces (a `Lister` for the repository map), kept for a session."""

    def __init__(
        self,
        start: Callable[[Path, Iterable[str], list[Path]], TreeWatch | None] = TreeWatch.start,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self._start = start
        self._clock = clock  # now, in ns since the epoch (the timestamps' clock)
        self._kept: dict[Path, _Watched] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.listed = 0  # full listings made (for tests and the benchmark)
        self.relisted = 0  # listings made from the changed paths only

    def __call__(self, workspace: Path) -> Listing:
        root = Path(os.path.realpath(workspace))
        with self._lock:
            try:
                return self._listing(root)
            finally:
                if self._closed:
                    self._close_watches()

    def _listing(self, root: Path) -> Listing:
        kept = self._kept.get(root)
        if kept is not None and kept.watch is None and self._clock() < kept.retry_at:
            kept.listing = self._list(root)
            return kept.listing
        if kept is None or kept.watch is None:
            return self._fresh(root, kept)
        changes = kept.watch.drain()
        git_names = {name for names in changes.extra.values() for name in names if not name.endswith(".lock")}
        rules = any(_decides(path) for path in changes.paths) or bool(git_names - GIT_NOISE - {GIT_INDEX})
        if changes.lost or rules or kept.user_files != _user_stamps():
            return self._fresh(root, kept)
        if GIT_INDEX in git_names or len(changes.paths) > MAX_CHANGED:
            listing = self._list(root)
            held = {path.rpartition("/")[0] for path in listing.files}
            if listing.nested or not listing.by_git or not kept.watch.covers(held):
                return self._fresh(root, kept)  # a submodule, or a file tracked in an ignored folder
            kept.listing = listing
            return listing
        if not changes.paths:
            return kept.listing
        changed = relist(root, kept.listing, changes.paths, SharedGit(root))
        if changed is None:
            return self._fresh(root, kept)
        self.relisted += 1
        kept.listing = changed
        return changed

    def close(self) -> None:
        """Closes the watches; a listing under way (a warm-up walking a large tree) is not waited for: it
        closes them as it ends, and lists without a watch from then on."""
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._close_watches()
            finally:
                self._lock.release()

    def _close_watches(self) -> None:
        for kept in self._kept.values():
            if kept.watch is not None:
                kept.watch.close()
        self._kept.clear()

    def _list(self, root: Path) -> Listing:
        self.listed += 1
        return list_files(root, view="model")

    def _fresh(self, root: Path, old: _Watched | None) -> Listing:
        """Lists the workspace, watching it first (so that nothing changed during the listing is missed)."""
        if old is not None and old.watch is not None:
            old.watch.close()
        self._kept.pop(root, None)
        user_files = _user_stamps()
        watch, retry_at = self._watch(root) if not self._closed else (None, self._clock() + RETRY_NS)
        listing = self._list(root)
        if watch is not None and (listing.nested or not listing.by_git):
            watch.close()
            watch, retry_at = None, self._clock() + RETRY_NS
        if len(self._kept) >= MAX_WORKSPACES:
            self._close_watches()
        self._kept[root] = _Watched(listing, watch, user_files, retry_at)
        return listing

    def _watch(self, root: Path) -> tuple[TreeWatch | None, int]:
        """A watch on the folders git walks in `root`, when `root` is the top of its repository, or None and
        when to try again. Each folder is watched before it is read (a folder made in it later is an
        event); what chose the folders (git's ignored folders and tracked files, asked first) must be older
        than RACY_NS before they were asked, or a change made before its folder was watched could go
        unseen: no watch until that much time has passed."""
        started = self._clock()
        dot_git = root / ".git"
        if not os.path.lexists(dot_git):
            return None, started + RETRY_NS
        git = SharedGit(root)
        _asked, ignored = git.ignored()
        found = git.get()
        tracked = found.run(root, ["ls-files", "-z", "--cached"]) if found is not None else None
        if ignored is None or tracked is None:
            return None, started + RETRY_NS
        files = [os.fsdecode(path) for path in tracked.split(b"\0") if path]
        skipped = {path[:-1] for path in ignored if path.endswith("/")}
        prefix = len(str(root)) + 1
        decided_by: list[str] = [str(root / PAICLI_IGNORE)]  # and each .gitignore and git file walked

        def folders() -> Iterator[str]:
            for kind, path in walked(str(root), skipped, files):
                if kind == "folder":
                    yield path[prefix:]
                else:
                    decided_by.append(path)

        extra = [where for folder in git_folders(dot_git) for where in (folder, folder / "info")]
        watch = self._start(root, folders(), extra)
        if watch is None:
            return None, started + RETRY_NS
        if not all(_older(path, started - RACY_NS) for path in decided_by):
            watch.close()
            return None, started + RACY_NS
        return watch, 0


def _decides(path: str) -> bool:
    """Whether a changed path may change which folders are watched or how the others are listed."""
    return path == PAICLI_IGNORE or path.rpartition("/")[2] in (".gitignore", ".git")


def _older(path: str, than: int) -> bool:
    changed = stamp(path)[1]
    return changed is None or changed < than


def _user_stamps() -> tuple[Stamp, ...]:
    return tuple(stamp(path) for path in user_git_files())
