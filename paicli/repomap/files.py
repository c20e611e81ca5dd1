"""Which files the map may name, and reading one of them safely.

The list comes from a lister passed in (`Lister`: the workspace → its Listing: workspace-relative posix
paths, and the object ids of the tracked files git found unchanged); `workspace_files` is that seam's
default, `watched_files` a session's: the model's view of the workspace file lister
(paicli/tools/file_lister.py: what git shows, minus .paicliignore, never an ignored path).

`read_source` never follows a symlink anywhere below the workspace (a link out of it is not read, nor
one inside: the file it names is listed on its own), reads at most `MAX_SOURCE_BYTES`, and returns None
for anything it cannot or should not read (gone since the listing, special, too large, binary, minified).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from paicli.common.errors import ConfigError
from paicli.repomap.tags import MAX_SOURCE_BYTES, readable_source
from paicli.tools.confined import read_below
from paicli.tools.file_lister import Listing, list_files
from paicli.tools.watched_listing import WatchedListings

Lister = Callable[[Path], Listing]
MAX_FILES = 50_000  # files beyond this are left out of the map (the first ones in sorted order stay)


def workspace_files(workspace: Path) -> Listing:
    """The files the model may see (the file lister's model view), sorted, at most MAX_FILES."""
    return _capped(list_files(workspace, view="model"))


def watched_files(listings: WatchedListings) -> Lister:
    """`workspace_files` kept up to date by the session's watched listings (paicli/tools/watched_listing.py)."""
    return lambda workspace: _capped(listings(workspace))


def _capped(listing: Listing) -> Listing:
    return replace(listing, files=listing.files[:MAX_FILES]) if len(listing.files) > MAX_FILES else listing


def read_source(workspace: Path, relative: str) -> str | None:
    """The text of a listed file (see the module's docstring), None when it is not to be read."""
    parts = relative.split("/")
    if not relative or any(part in ("", ".", "..") for part in parts):
        return None
    try:
        data = read_below(workspace, parts, limit=MAX_SOURCE_BYTES)
    except (OSError, ConfigError):
        return None
    return readable_source(data)
