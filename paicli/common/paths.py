"""Workspace paths as plans declare them and tools name them: one normal form, one way to compare.

`normalise(text)` is the lexical normal form every route gives a declared path (a planner reply, a
`--from` file, an `e` edit, a saved plan on `--resume`, a replan): `./src//a.py` → `src/a.py`,
`sub/../a.txt` → `a.txt`, `./sub/./` → `sub/` (a folder keeps its `/`), `.` or `./` → `./` (the whole
workspace). `declared_problem(text)` says why a text cannot be a declared path at all (empty, a glob,
absolute, leading out of the workspace). Symlinks are not this module's business: the workspace guard
(paicli/tools/guard.py) resolves them and the plan contract refuses a path that leads through one.

`Names.of(workspace)` tells how the workspace's filesystem compares names, found once per workspace by
probing it (a file created and looked up under another spelling, then removed): whether `README.md`
and `readme.md` are one file (case-insensitive, as on macOS and Windows) and whether a name in NFC and
in NFD are one file (as on macOS). `Names.key(path)` is the form two paths are compared in: equal keys,
the same file. When the probe cannot run (a read-only workspace), both foldings are assumed: a conflict
is then seen where there may be none, never missed.
"""

from __future__ import annotations

import functools
import os
import posixpath
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

WHOLE_WORKSPACE = "./"
GLOB_CHARACTERS = frozenset("*?[")


def normalise(text: str) -> str | None:
    """The normal form of a workspace-relative path (see the module docstring); None for a blank one."""
    stripped = text.strip()
    if not stripped:
        return None
    folder = stripped.endswith("/") or stripped.rpartition("/")[2] in (".", "..")
    normal = posixpath.normpath(stripped)
    if normal.startswith("//"):  # POSIX keeps a leading `//`; it is `/` all the same
        normal = "/" + normal.lstrip("/")
    if normal == ".":
        return WHOLE_WORKSPACE
    return normal + "/" if folder and not normal.endswith("/") else normal


def declared_problem(normal: str) -> str | None:
    """Why a normalised path cannot be declared, as the rest of a sentence naming the task (`task "t1" ` +
    this), or None. The one wording every route of a plan reports."""
    if GLOB_CHARACTERS & set(normal):
        return f'has the pattern {normal!r} in "files"; name paths or folders, no globs'
    if normal.startswith("/") or normal == "../" or normal.startswith("../"):
        return f"declares {normal!r}, which is outside the workspace; use relative paths"
    if "\x00" in normal:
        return 'has a path with a NUL character in "files"'
    return None


def is_folder(normal: str) -> bool:
    return normal.endswith("/")


def parents(normal: str) -> list[str]:
    """The folders a normalised path lies in, outermost first, without `/`: `a/b/c` → [`a`, `a/b`]."""
    parts = normal.rstrip("/").split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts))]


@dataclass(frozen=True)
class Names:
    """How a filesystem compares names: folding case, folding Unicode normal forms (NFC/NFD)."""

    case_insensitive: bool = False
    unicode_insensitive: bool = False

    @staticmethod
    def of(workspace: Path) -> Names:
        """The workspace's filesystem, probed once per resolved folder (see the module docstring)."""
        return _probe(os.path.realpath(workspace))

    def key(self, normal: str) -> str:
        """The comparison form of a normalised path: equal keys name the same file on this filesystem."""
        key = unicodedata.normalize("NFC", normal) if self.unicode_insensitive else normal
        return key.casefold() if self.case_insensitive else key

    def same(self, first: str, second: str) -> bool:
        return self.key(first) == self.key(second)

    def covers(self, outer: str, inner: str) -> bool:
        """Whether the declared `outer` (a file, a folder `dir/`, or `./`) takes in the path `inner`."""
        if outer == WHOLE_WORKSPACE:
            return True
        outer_key, inner_key = self.key(outer), self.key(inner)
        if outer_key == inner_key or (is_folder(outer) and outer_key.rstrip("/") == inner_key.rstrip("/")):
            return True
        return is_folder(outer) and inner_key.startswith(outer_key)


_PROBE_NAME = "\u00c9"  # É: its lower case é, its NFD form E + U+0301


@functools.lru_cache(maxsize=64)
def _probe(workspace: str) -> Names:
    try:
        handle, made = tempfile.mkstemp(prefix=".paicli-names-", suffix=_PROBE_NAME, dir=workspace)
    except (OSError, UnicodeError):
        return Names(case_insensitive=True, unicode_insensitive=True)
    os.close(handle)
    try:
        folder, name = os.path.split(made)
        case = os.path.exists(os.path.join(folder, name.swapcase()))
        unicode = os.path.exists(os.path.join(folder, unicodedata.normalize("NFD", name)))
        return Names(case_insensitive=case, unicode_insensitive=unicode)
    finally:
        os.unlink(made)
