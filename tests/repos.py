"""Real git repositories for tests: paicli counts git as read-only only in the workspace's own repository."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_init(folder: Path) -> Path:
    """`git init` in `folder` (created if needed); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
    return folder
