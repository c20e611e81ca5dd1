"""Fixtures for the checkpoint engine: a real store (real git, real files) on the test workspace, and
small helpers that record a turn or a plan the way the driver and the tool box do."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from paicli.app.checkpoints.command import UndoAnswer, undo_answer
from paicli.app.checkpoints.journal import Entry
from paicli.app.checkpoints.recording import Recording
from paicli.app.checkpoints.store import CheckpointStore, store_folder

GIT = shutil.which("git") or "git"


@pytest.fixture
def notices() -> list[str]:
    return []


@pytest.fixture
def store(workspace: Path, home: Path, notices: list[str]) -> CheckpointStore:
    made = CheckpointStore(GIT, workspace, store_folder(home, workspace), notify=notices.append)
    made.ensure()
    return made


def recording(store: CheckpointStore, kind: str = "turn", entry_id: str | None = None) -> Recording:
    entry = Entry(id=entry_id or store.journal.new_id(), kind=kind, label=f"a {kind}")  # type: ignore[arg-type]
    rec = Recording(store, entry)
    rec.start()
    return rec


def tool_write(rec: Recording, task_id: str | None, path: str, content: str | bytes) -> None:
    """What write_file does, as the tool box tells the checkpoints: observe first, then write."""
    rec.note_write(task_id, path)
    target = rec.store.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content.encode() if isinstance(content, str) else content)


def command(rec: Recording, task_id: str | None, script: str) -> None:
    """What execute_command does: observe first, then run the script in the workspace."""
    rec.note_execute(task_id)
    subprocess.run(["bash", "-c", script], cwd=rec.store.root, check=True)


def undo(store: CheckpointStore, entry_id: str | None = None, **options: object) -> UndoAnswer:
    return undo_answer(store, entry_id, **options)  # type: ignore[arg-type]


def state(root: Path) -> dict[str, tuple[str, bytes, int]]:
    """Everything in the workspace except .git, without following symlinks: path → (kind, bytes, mode)."""
    found: dict[str, tuple[str, bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (folder == str(root) and d == ".git")]
        for name in [*files, *[d for d in dirs if os.path.islink(os.path.join(folder, d))]]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.fsencode(os.readlink(path)), 0)
            elif not stat.S_ISREG(st.st_mode):  # a FIFO or a socket: never opened (a FIFO would block)
                found[rel] = ("special", b"", stat.S_IFMT(st.st_mode))
            else:
                found[rel] = ("file", Path(path).read_bytes(), stat.S_IMODE(st.st_mode))
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                found[os.path.relpath(path, root) + "/"] = ("dir", b"", 0)
    return found
