"""Unix sockets on the filesystem, found so the sandbox can cover them.

A network namespace cuts TCP and abstract Unix sockets (those live in the namespace), but not a socket
file: `connect("/var/run/docker.sock")` reaches a daemon on the host, and the Docker, LXD or Podman
socket is root on the host. `/run`, `/var/run`, `$XDG_RUNTIME_DIR` and `/tmp` are hidden whole
(bwrap.py); the sockets elsewhere are looked for in the usual places (`/var/lib`, `/var/snap`,
`/var/tmp`, `/opt`, `/srv`, the home folder), a few levels deep and at most MAX_ENTRIES entries, and
`/dev/null` is bound over each one: a connection to it is refused. A socket whose folder is removed
between the scan and bwrap's start makes bwrap fail in its setup; the start is made once more with the
options built again (launch.py).

Why not seccomp: a filter cannot read the path `connect(2)` is given, so it could only refuse every
AF_UNIX socket, and builds and test suites make their own (servers on a socket in /tmp, language
servers, build daemons, ssh's control sockets). What is left: a socket made after paicli started in a
folder not scanned then, and sockets deeper than SCAN_DEPTH or outside these places.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from paicli.sandbox.folders import Folders

PLACES = ("/var/lib", "/var/snap", "/var/tmp", "/opt", "/srv", "/mnt", "/media")
SCAN_DEPTH = 5  # folders below each place
MAX_ENTRIES = 100_000
# Big trees of image layers, packages and toolchains, where no daemon keeps its socket.
SKIPPED = frozenset(
    {"overlay2", "overlay", "aufs", "node_modules", ".git", "site-packages", "__pycache__", ".venv", "venv"}
    | {".rustup", ".pyenv", ".nvm", ".m2", ".gradle", ".npm", "registry", "toolchains", "pkg"}
)


def scan_folders(clock: Callable[[], int] = time.time_ns) -> Folders:
    """A cache of folder listings for these scans (never into SKIPPED folders)."""
    return Folders(not_into=SKIPPED, clock=clock)


def find_sockets(
    home: Path,
    places: Iterable[str] = PLACES,
    skip: Iterable[Path] = (),
    folders: Folders | None = None,
    away: Iterable[Path] = (),
) -> list[Path]:
    """Socket files below `places` and `home` (resolved, each once), not below any of `skip` (the home
    folder is scanned wherever it is: under /tmp, the sandbox binds it over its private /tmp) nor of `away`
    (not even in the home folder: the workspace, whose sockets are its own). Folder listings come from
    `folders` (folders.py): scanning again costs a `stat` per folder where nothing changed."""
    listed = scan_folders() if folders is None else folders  # None: no memo, every folder read
    kept_away = [str(Path(os.path.realpath(p))) for p in away]
    skipped = [Path(os.path.realpath(p)) for p in skip]
    found: list[Path] = []
    budget = [MAX_ENTRIES]
    home = Path(os.path.realpath(home))
    if os.path.isdir(home):
        _scan(listed, str(home), kept_away, found, budget)
    for place in places:
        root = Path(os.path.realpath(place))
        if os.path.isdir(root) and not any(root.is_relative_to(s) for s in skipped):
            _scan(listed, str(root), [str(s) for s in (*skipped, home)] + kept_away, found, budget)
    return list(dict.fromkeys(found))


def _scan(folders: Folders, top: str, skipped: list[str], found: list[Path], budget: list[int]) -> None:
    stack = [(top, SCAN_DEPTH)]
    while stack:
        folder, depth = stack.pop()
        listing = folders.listing(folder)
        if listing is None:
            continue
        budget[0] -= listing.count
        if budget[0] < 0:
            return
        found += [Path(folder, name) for name in listing.sockets]
        if depth > 0:
            inside = [s for s in skipped if _within(s, folder)]  # a skipped folder somewhere below this one
            stack += [(path, depth - 1) for path in listing.below if not any(_within(path, s) for s in inside)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
