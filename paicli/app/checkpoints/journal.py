"""The journal: what each turn and each plan changed, one JSON file per entry, beside the shadow
repository. The repository holds the contents; the journal says which content a path had before and
after each step, who wrote it, and what undo has done since.

Entries are written atomically after every step, so a crash leaves the previous or the new record.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from paicli.app.checkpoints.images import Image
from paicli.tools.atomic import atomic_write

ENTRY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
MAX_ENTRY_BYTES = 32 << 20


class Window(BaseModel):
    """A path's content at a step's start and end (None: absent)."""

    before: Image | None
    after: Image | None


class Step(BaseModel):
    """One checkpointed stretch of work: a chat turn (task_id None) or one run of a plan task."""

    task_id: str | None
    start: int  # the entry's clock when the step began; steps overlap when their spans do
    end: int | None = None
    before: str | None = None  # commit
    after: str | None = None  # commit
    executed: bool = False  # ran a command (or any tool that may change anything)
    writes: dict[str, Image | None] = Field(default_factory=dict)  # path → content before the first tool write
    window: dict[str, Window] = Field(default_factory=dict)  # what changed between start and end
    # Wall-clock times of the window (its `before` checkpoint, its `after`), so that other paicli processes
    # in the workspace can tell whether their steps overlapped this one.
    started_at: float | None = None
    ended_at: float | None = None
    foreign: list[str] = Field(default_factory=list)  # changed meanwhile by another paicli process's tool write
    uncertain: list[str] = Field(default_factory=list)  # changed while someone else may have changed it too
    # What its commands were declared to write (a plan task's `files`; None: anything, as in chat), and
    # whether they ran held to it (in the sandbox, every one of them). Read by attribution.py.
    declared: list[str] | None = None
    held: bool = False
    outside: list[str] = Field(default_factory=list)  # changed meanwhile where its commands could not write


class Change(BaseModel):
    """One path the entry changed: content before and after, line counts, the tasks that changed it."""

    path: str
    before: Image | None
    after: Image | None
    added: int | None = None  # None for a binary file
    removed: int | None = None
    tasks: list[str] = Field(default_factory=list)  # empty in a chat turn
    attributed: bool = True  # False: someone else may have made it (attribution.py)

    @property
    def status(self) -> Literal["created", "modified", "deleted"]:
        if self.before is None:
            return "created"
        return "deleted" if self.after is None else "modified"


class Undo(BaseModel):
    """One undo of a whole entry (task_id None) or of one task; `before` is the state it replaced (so a
    redo can bring it back), `after` what it wrote. "undoing" and "redoing" while they run: if paicli
    dies half way, the next undo or redo finishes the job."""

    seq: int
    task_id: str | None
    at: float
    state: Literal["undoing", "done", "redoing", "redone"] = "undoing"
    before: dict[str, Image | None]
    after: dict[str, Image | None]


class Entry(BaseModel):
    id: str
    kind: Literal["turn", "plan"]
    label: str
    created_at: float = Field(default_factory=time.time)
    finished: bool = False
    clock: int = 0
    steps: list[Step] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)
    undos: list[Undo] = Field(default_factory=list)

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def undone(self) -> bool:
        """Taken back as a whole (and not redone)."""
        return any(u.task_id is None and u.state == "done" for u in self.undos)

    def undone_tasks(self) -> list[str]:
        return [u.task_id for u in self.undos if u.task_id is not None and u.state == "done"]

    def task_ids(self) -> list[str]:
        seen = dict.fromkeys(s.task_id for s in self.steps if s.task_id is not None)
        return list(seen)


class Journal:
    """The entries of one workspace, in `folder` (one `<id>.json` each)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, entry_id: str) -> Path:
        if not ENTRY_ID.fullmatch(entry_id):
            raise ValueError(f"not a checkpoint id: {entry_id!r}")
        return self.folder / f"{entry_id}.json"

    def save(self, entry: Entry) -> None:
        # ASCII JSON: a file name that is not UTF-8 (held as lone surrogates, as os.fsdecode gives it)
        # is written as \udcXX escapes and read back as the same name.
        atomic_write(self.path(entry.id), json.dumps(entry.model_dump(mode="json"), ensure_ascii=True))

    def load(self, entry_id: str) -> Entry | None:
        try:
            path = self.path(entry_id)
        except ValueError:
            return None
        return _read(path)

    def entries(self) -> list[Entry]:
        """All readable entries, oldest first (unreadable files are passed over)."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.glob("*.json"):
            if ENTRY_ID.fullmatch(path.stem) and (entry := _read(path)) is not None and entry.id == path.stem:
                found.append(entry)
        return sorted(found, key=lambda e: (e.created_at, e.id))

    def count(self) -> int:
        """How many entries there are, at most (their files, not read)."""
        try:
            return sum(1 for name in os.listdir(self.folder) if name.endswith(".json"))
        except OSError:
            return 0

    def delete(self, entry_id: str) -> None:
        with contextlib.suppress(FileNotFoundError, ValueError):
            os.unlink(self.path(entry_id))

    def new_id(self, kind: str = "turn") -> str:
        """A fresh id: `turn-20260101-120000` (`-2`, `-3`… when taken)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        candidate, n = f"{kind}-{stamp}", 2
        while self.path(candidate).exists():
            candidate, n = f"{kind}-{stamp}-{n}", n + 1
        return candidate


def _read(path: Path) -> Entry | None:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_ENTRY_BYTES:
            return None
        return Entry.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
