"""The repository index brought up to date in the background while the user types the first message.

A session's first plan would otherwise wait for the whole update before its planning request is sent:
a first build reads every file (babel, 27,674 files: about 18 s), and even an index kept from an earlier
session is listed afresh once per process (0.5 s there). The warm-up does that work at once, in a thread
of lower priority (nice 10: the user's own commands and the model's tools come first); the planner then
waits for what is left of it (`wait`) instead of building the index itself. Only in a git repository's
top folder (a session opened in a home folder or any large tree outside git does not index it unasked).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded in the warm-up's thread: the REPL's start does not wait for these imports
    from paicli.repomap.index import UpdateReport
    from paicli.tools.watched_listing import WatchedListings

NICENESS = 10


class MapWarmup:
    def __init__(self, workspace: Path, home: Path, listings: WatchedListings) -> None:
        self.workspace = workspace
        self.home = home
        self.listings = listings  # the session's (the plans list through it too)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.report: UpdateReport | None = None  # the warm-up's, once done (for tests)

    def start(self) -> bool:
        """Starts the warm-up once; False when there is nothing to warm (not a repository's top folder)."""
        with self._lock:
            if self._thread is not None:
                return True
            if not os.path.lexists(self.workspace / ".git"):
                return False
            self._thread = threading.Thread(target=self._run, name="paicli-index", daemon=True)
            self._thread.start()
            return True

    def wait(self) -> None:
        """Returns once the warm-up has finished (at once when none was started)."""
        thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        import sqlite3

        from paicli.common.events import NullSink
        from paicli.repomap.files import watched_files
        from paicli.repomap.repo_map import RepoMap

        with contextlib.suppress(OSError, AttributeError):  # no per-thread priority here: run as it is
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        repo_map = RepoMap(self.workspace, self.home, NullSink(), lister=watched_files(self.listings))
        try:
            with contextlib.suppress(OSError, sqlite3.Error):  # the plan's own update meets and reports it
                self.report = repo_map.index.update()
        finally:
            repo_map.close()
