"""Files outside the workspace that hold the user's keys, hidden from sandboxed commands.

Shell start-up files and histories are where keys are exported and typed (`export PAICLI_API_KEY=...` in
~/.bashrc); `.env` and `.envrc` files above the workspace and in the home folder are where tools keep
them. They are hidden by default (SHELL_FILES, `env_files`). On top of that, at start-up, the usual
places (the home folder's own files, ~/.config two levels down, the folders above the workspace) are
read for the session's secret values (the key): any file holding one is hidden too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

SHELL_FILES = (
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.config/fish",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.histfile",
    "~/.local/share/fish",
    "~/.python_history",
)
ENV_NAMES = (".env", ".envrc")
MAX_READ = 1 << 20  # bytes of one file read when looking for a secret
MAX_FILES = 2000
MIN_SECRET = 8


def env_files(workspace: Path, home: Path) -> list[Path]:
    """`.env` and `.envrc` in the home folder and in each folder above the workspace (not in it)."""
    folders = [home, *Path(os.path.realpath(workspace)).parents]
    return [folder / name for folder in dict.fromkeys(folders) for name in ENV_NAMES if os.path.lexists(folder / name)]


def files_holding(secrets: Sequence[str], workspace: Path, home: Path) -> list[Path]:
    """Files in the usual places that contain one of `secrets` (values shorter than MIN_SECRET ignored)."""
    needles = [value.encode() for value in secrets if len(value) >= MIN_SECRET]
    if not needles:
        return []
    root = Path(os.path.realpath(workspace))
    found: list[Path] = []
    for path in _usual_files(root, Path(os.path.realpath(home))):
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_READ)
        except OSError:
            continue
        if any(needle in data for needle in needles):
            found.append(path)
    return found


def _usual_files(root: Path, home: Path) -> Iterator[Path]:
    count = 0
    folders = [(home, 1), (home / ".config", 2), (home / ".local" / "share", 2), *((p, 0) for p in root.parents)]
    for folder, depth in folders:
        for path in _files(folder, depth, root):
            count += 1
            if count > MAX_FILES:
                return
            yield path


def _files(folder: Path, depth: int, root: Path) -> Iterator[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        if path == root or path.is_relative_to(root):
            continue
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            yield path
        elif stat.S_ISDIR(mode) and depth > 0:
            yield from _files(path, depth - 1, root)
