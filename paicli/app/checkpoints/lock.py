"""One writer at a time on a shadow repository, across threads and across paicli processes: an
exclusive `flock` on a file beside it. A second process waits, and says so once it has to."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

WAIT_SECONDS = 60.0
_POLL = 0.05


class LockTimeout(Exception):
    pass


class StoreLock:
    def __init__(self, path: Path, *, notify: Callable[[str], None], wait: float = WAIT_SECONDS) -> None:
        self.path = path
        self.notify = notify
        self.wait = wait
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + self.wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told:
                    told = True
                    self.notify("another paicli is writing checkpoints of this workspace; waiting for it")
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeout(
                        f"another paicli held the checkpoint lock ({self.path}) for over {self.wait:g} s"
                    ) from None
                time.sleep(_POLL)
        self._fd = fd

    def _release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
