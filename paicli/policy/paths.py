"""Where a command's path arguments lead: inside the workspace, outside it, or somewhere never safe to read.

`Places` knows every folder the shell may be in at a point of the command line (the workspace, and the
folders a `cd` before it may have entered) and checks a word as a path from each of them: globs are
expanded, symlinks resolved, `/proc`, `/sys` and `/dev` refused.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from paicli.shell.syntax import Literal, Word

MAX_GLOB_MATCHES = 2000
HARMLESS_FILES = frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# Pseudo-filesystems: the environment of running processes (paicli's own included), kernel state, devices.
_NEVER_SAFE = (Path("/proc"), Path("/sys"), Path("/dev"))
_GLOB_START = frozenset("*?[")


class OutsideRead(str):
    """A reason that is about reading outside the workspace (or where paicli cannot tell): the sandbox
    does not make such a command harmless (what it reads reaches the model), so it still asks there."""


@dataclass
class Places:
    root: Path
    folders: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folders = [self.root]

    @property
    def only_root(self) -> bool:
        return all(folder == self.root for folder in self.folders)

    def enter(self, word: Word) -> str | None:
        """`cd WORD`: why it cannot be followed, or None once every folder it may lead to is added."""
        if reason := self.outside(word):
            return reason
        self.folders += [Path(os.path.realpath(folder / word.text)) for folder in self.folders]
        return None

    def outside(self, word: Word) -> OutsideRead | None:
        """Why `word`, used as a path from any folder the command may be in, is not safe to read, or None."""
        text = word.text
        if text == "-" and word.static:
            return None
        if not word.static:
            return OutsideRead(f"the path {text!r} is only known when it runs")
        if word.tilde:
            return OutsideRead(f"{text} is in a home folder, outside the workspace")
        if text in HARMLESS_FILES:
            return None
        if word.glob and (reason := _unexpandable(word)):
            return OutsideRead(reason)
        for folder in self.folders:
            try:
                paths = _expand(folder, word)
            except _TooManyMatches:
                return OutsideRead(f"{text} matches too many files to check")
            for path in paths:
                resolved = Path(os.path.realpath(path))
                if any(resolved == top or resolved.is_relative_to(top) for top in _NEVER_SAFE) and not (
                    str(resolved) in HARMLESS_FILES or resolved.is_relative_to(self.root)
                ):
                    return OutsideRead(f"it reads {text}, which holds process, kernel or device state")
                if not resolved.is_relative_to(self.root):
                    return OutsideRead(f"it reads {text}, which is outside the workspace")
        return None

    def paths(self, word: Word, *, resolve: bool = True) -> list[Path]:
        """Where `word` leads as a path, from each folder the command may be in: its glob expanded (as bash
        would; nothing for a pattern paicli does not expand like bash, or one matching too many files), a
        leading `~/` expanded, symlinks resolved (unless `resolve` is off). [] for a word only known when
        the command runs."""
        if not word.static or (word.glob and _unexpandable(word)):
            return []
        if word.tilde:
            if word.glob or not (word.text == "~" or word.text.startswith("~/")):
                return []
            found = [Path(os.path.expanduser(word.text))]
        else:
            try:
                found = [path for folder in self.folders for path in _expand(folder, word)]
            except _TooManyMatches:
                return []
        unique = dict.fromkeys(Path(os.path.realpath(p)) if resolve else Path(os.path.normpath(p)) for p in found)
        return list(unique)


def option_like_glob(word: Word) -> bool:
    """Whether a glob in `word` can expand to a name that starts with `-` (an option to the command),
    e.g. `*`, `?*`, `[-a]*`, `-*`; `./*` and `src/*.py` cannot."""
    if not word.glob:
        return False
    first = word.parts[0] if word.parts else None
    if not isinstance(first, Literal) or not first.text:
        return True
    return first.text[0] == "-" or (not first.quoted and first.text[0] in _GLOB_START)


def _unexpandable(word: Word) -> str | None:
    """Why Python's glob may not match what bash matches: POSIX classes (`[[:alpha:]]`), `[^...]`, and
    hidden-file patterns that older bash versions let match `..`."""
    pattern = word.pattern
    if re.search(r"\[[!^]?\]?[^\]]*(?:\[[:=.]|\\)", pattern) or "[^" in pattern:
        return f"{word.text} is a pattern paicli does not expand the way bash does"
    if any(part.startswith(".") and _GLOB_START & set(part) for part in pattern.split("/")):
        return f"{word.text} can match `..` in some versions of bash"
    return None


def _expand(folder: Path, word: Word) -> list[Path]:
    if not word.glob:
        return [folder / word.text]
    matches = glob.glob(word.pattern, root_dir=folder, include_hidden=False)
    if len(matches) > MAX_GLOB_MATCHES:
        raise _TooManyMatches(word.text)
    return [folder / m for m in matches] or [folder / word.text]


class _TooManyMatches(Exception):
    pass
