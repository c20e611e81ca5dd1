"""The prompt's history, one per workspace: Up/Down and Ctrl-R go through what was typed in this project.

The file is ~/.paicli/history/<name>-<hash>, the name being the workspace folder's (for a person looking)
and the hash of its resolved path telling two folders of the same name apart. Without a writable home
the history lives in memory for the session.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def history_path(home: Path, workspace: Path) -> Path:
    resolved = os.path.realpath(workspace)
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:12]
    name = _UNSAFE.sub("_", Path(resolved).name)[:40] or "root"
    return home / ".paicli" / "history" / f"{name}-{digest}"


def history_file(home: Path, workspace: Path) -> History:
    path = history_path(home, workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()
