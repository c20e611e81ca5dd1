"""Stand-ins for full-screen editors in the environment of `execute_command`.

Commands run without a terminal, so `vi notes.txt` would wait for keys until the timeout kills it. The
stand-ins, first on PATH, say why and fail at once (exit 126); the editors' own non-interactive modes
(`vim -es`, `nvim --headless`, ...) pass through to the real program.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

SCREEN_EDITORS = ("vi", "vim", "nvim", "view", "vimdiff", "nano", "pico")

_SCRIPT = """#!/bin/sh
for arg in "$@"; do
  case "$arg" in
    -es|-Es|-e|-s|--headless|--version|-h|--help) PATH=${PATH#*:} exec "$(basename "$0")" "$@" ;;
  esac
done
echo "paicli: $(basename "$0") needs a terminal and commands run without one;" \\
  "read and change files with read_file, edit_file and write_file" >&2
exit 126
"""

_folder: Path | None = None


def shim_folder() -> Path:
    """A private folder (mode 0700, made once per process, removed at exit) holding the stand-ins."""
    global _folder
    if _folder is None or not _folder.is_dir():
        folder = Path(tempfile.mkdtemp(prefix="paicli-shims-"))
        for name in SCREEN_EDITORS:
            script = folder / name
            script.write_text(_SCRIPT)
            script.chmod(0o755)
        atexit.register(shutil.rmtree, folder, True)
        _folder = folder
    return _folder


def with_shims(path: str) -> str:
    return f"{shim_folder()}{os.pathsep}{path}" if path else str(shim_folder())


def command_search_path() -> str:
    """The PATH `execute_command` gives commands: the stand-ins first, then paicli's own PATH."""
    return with_shims(os.environ.get("PATH", os.defpath))


def workspace_program_folders(root: Path, search_path: str | None = None) -> list[Path]:
    """The folders on the commands' PATH that lie inside the workspace `root` (resolved): a file written
    there could run in place of a program (an activated `.venv/bin`, a `bin/` added by direnv)."""
    folders: list[Path] = []
    for entry in (command_search_path() if search_path is None else search_path).split(os.pathsep):
        if entry and os.path.isabs(entry):
            folder = Path(os.path.realpath(entry))
            if folder.is_relative_to(root):
                folders.append(folder)
    return folders
