"""Undo and redo: what they would do (a preview, also the `--dry-run`), and doing it.

Undo of an entry puts back what each changed path held before the entry; undo of one task, what the
path held before that task. Nothing is lost: a path whose content is no longer what the entry (or the
latest undo) left, because the user or a later turn changed it, is not overwritten without `force`;
nor is a path another task of the plan also changed, when one task is undone. The state an undo
replaces is stored first (the record is saved as "undoing" before any file changes), so a redo can
bring it back, and an undo killed half way is finished by the next undo or redo.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from paicli.app.checkpoints.attribution import expected_now, task_paths
from paicli.app.checkpoints.images import OTHER, Image, disk_image
from paicli.app.checkpoints.journal import Entry, Undo
from paicli.app.checkpoints.restore import apply
from paicli.app.checkpoints.store import CheckpointStore


class UndoRefusal(Exception):
    """Nothing to undo or redo, or an id that names nothing; `usage` marks the latter (exit 2)."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class Action:
    path: str
    current: Image | None  # what the path holds now
    target: Image | None  # what it will hold
    added: int | None = None  # lines, from now to then (None: binary)
    removed: int | None = None

    @property
    def kind(self) -> Literal["remove", "create", "restore"]:
        if self.target is None:
            return "remove"
        return "create" if self.current is None else "restore"


@dataclass
class Preview:
    entry: Entry
    task_id: str | None
    redo: bool
    actions: list[Action]
    changed_since: list[str] = field(default_factory=list)  # changed after the entry (or the undo)
    shared: dict[str, list[str]] = field(default_factory=dict)  # path → other tasks that changed it too
    unattributed: list[str] = field(default_factory=list)  # changes that may be another process's (issue 29)
    errors: dict[str, str] = field(default_factory=dict)  # filled in once carried out
    record: Undo | None = None  # for a redo: the undo it takes back

    @property
    def refused(self) -> bool:
        return bool(self.changed_since or self.shared or self.unattributed)

    @property
    def subject(self) -> str:
        what = f"{self.task_id} of {self.entry.id}" if self.task_id else self.entry.id
        return f"{'redo of the undo of' if self.redo else 'undo of'} {what}"


def select(entries: list[Entry], entry_id: str | None, task_id: str | None) -> Entry:
    """The entry an undo is about: the named one, else the latest one not undone that changed files
    (with a task: the latest plan)."""
    if entry_id is not None:
        entry = next((e for e in entries if e.id == entry_id), None)
        if entry is None:
            known = ", ".join(e.id for e in entries[-3:][::-1]) or "none yet"
            raise UndoRefusal(f"no checkpoint {entry_id!r} (latest: {known}; `paicli undo --list`)", usage=True)
    elif task_id is not None:
        entry = next((e for e in reversed(entries) if e.kind == "plan"), None)
        if entry is None:
            raise UndoRefusal("there is no plan to undo a task of", usage=True)
    else:
        entry = next((e for e in reversed(entries) if e.changes and not e.undone()), None)
        if entry is None:
            raise UndoRefusal("nothing to undo")
    if task_id is not None and task_id not in entry.task_ids():
        tasks = ", ".join(entry.task_ids()) or "none that changed files"
        raise UndoRefusal(f"{entry.id} has no task {task_id!r} (its tasks: {tasks})", usage=True)
    return entry


def select_shown(entries: list[Entry], entry_id: str | None, task_id: str | None) -> Entry:
    """The entry `/changes` shows: the named one, else the latest that changed files (with a task: the
    latest plan), undone or not."""
    if entry_id is not None or task_id is not None:
        return select(entries, entry_id, task_id)
    entry = next((e for e in reversed(entries) if e.changes), None)
    if entry is None:
        raise UndoRefusal("no changes recorded yet in this workspace")
    return entry


def preview_undo(store: CheckpointStore, entry: Entry, task_id: str | None) -> Preview:
    if task_id is None:
        if entry.undone():
            raise UndoRefusal(f"{entry.id} is undone already (`/redo` or `paicli undo --redo` takes that back)")
        targets = {change.path: change.before for change in entry.changes}
        shared: dict[str, list[str]] = {}
    else:
        paths = task_paths(entry, task_id)
        targets = {path: before for path, (before, _) in paths.items()}
        shared = {path: others for path, (_, others) in paths.items() if others}
    expected = {path: expected_now(entry, path) for path in targets}
    preview = _preview(store, entry, task_id, targets, expected, redo=False)
    acting = {a.path for a in preview.actions}
    preview.shared = {path: others for path, others in shared.items() if path in acting}
    preview.unattributed = [
        c.path
        for c in entry.changes
        if not c.attributed and c.path in acting and (task_id is None or task_id in c.tasks)
    ]
    if not preview.actions:
        what = f"{task_id} of {entry.id}" if task_id else entry.id
        raise UndoRefusal(f"nothing to undo: the files of {what} already hold what they held before")
    return preview


def preview_redo(store: CheckpointStore, entries: list[Entry]) -> Preview:
    latest: tuple[Entry, Undo] | None = None
    for entry in entries:
        for undo in entry.undos:
            if undo.state == "done" and (latest is None or undo.seq > latest[1].seq):
                latest = (entry, undo)
    if latest is None:
        raise UndoRefusal("nothing to redo")
    entry, undo = latest
    preview = _preview(store, entry, undo.task_id, dict(undo.before), dict(undo.after), redo=True)
    preview.record = undo
    if not preview.actions:
        raise UndoRefusal("nothing to redo: the files already hold what the undo replaced")
    return preview


def _preview(
    store: CheckpointStore,
    entry: Entry,
    task_id: str | None,
    targets: dict[str, Image | None],
    expected: dict[str, Image | None],
    *,
    redo: bool,
) -> Preview:
    current = _stored_now(store, targets, expected)  # the state an undo replaces is itself kept
    moving = {path: target for path, target in targets.items() if current[path] != target}
    stats = store.numstat({path: (current[path], target) for path, target in moving.items()})
    actions = [
        Action(path, current[path], target, *stats.get(path, (None, None))) for path, target in sorted(moving.items())
    ]
    changed = [path for path in sorted(moving) if current[path] != expected.get(path)]
    return Preview(entry, task_id, redo, actions, changed_since=changed)


def _stored_now(
    store: CheckpointStore, targets: dict[str, Image | None], expected: dict[str, Image | None]
) -> dict[str, Image | None]:
    """What each path holds now, every content among it stored in the repository. Contents the entry
    knows (what it left, what it would restore) are stored already; the rest (a user's edit) is stored
    now, so that a redo can bring it back."""
    current = {path: disk_image(store.root, path) for path in targets}
    known = {path for path, image in current.items() if image in (None, OTHER, targets[path], expected.get(path))}
    current.update(store.store_disk(path for path in targets if path not in known))
    return current


def carry_out(store: CheckpointStore, preview: Preview, *, force: bool) -> Preview:
    """Does what `preview` says (unless refused and not `force`); `preview.errors` lists what failed."""
    if preview.refused and not force:
        return preview
    entry = preview.entry
    before = {a.path: a.current for a in preview.actions}
    after = {a.path: a.target for a in preview.actions}
    store.keep_images(entry.id, [*before.values(), *after.values()])
    if preview.record is not None:
        record = preview.record
        record.state = "redoing"
    else:
        record = Undo(seq=time.time_ns(), task_id=preview.task_id, at=time.time(), before=before, after=after)
        entry.undos.append(record)
    store.journal.save(entry)  # before any file changes: a kill from here on is finished next time
    blobs = store.read_blobs(image.sha for image in after.values() if image is not None)
    preview.errors = apply(store.root, after, blobs)
    for path in preview.errors:  # these kept what they held: the record says so
        record.after[path] = record.before[path] = disk_image(store.root, path)
    record.state = "redone" if preview.redo else "done"
    store.journal.save(entry)
    return preview


def finish_interrupted(store: CheckpointStore, entries: list[Entry], notify: Callable[[str], None]) -> None:
    """Finishes undos and redos that a kill stopped half way (their paths still as before or after)."""
    for entry in entries:
        for record in entry.undos:
            if record.state not in ("undoing", "redoing"):
                continue
            redo = record.state == "redoing"
            start, goal = (record.after, record.before) if redo else (record.before, record.after)
            targets = {}
            for path in goal:
                now = disk_image(store.root, path)
                if now == goal[path]:
                    continue
                if now != start[path]:
                    notify(f"{path} changed since an interrupted undo; left as it is")
                    continue
                targets[path] = goal[path]
            blobs = store.read_blobs(image.sha for image in targets.values() if image is not None)
            errors = apply(store.root, targets, blobs, clean_leftovers=True)
            for path, reason in errors.items():
                notify(f"could not finish the interrupted undo of {path}: {reason}")
            record.state = "redone" if redo else "done"
            store.journal.save(entry)
            notify(f"finished an interrupted {'redo' if redo else 'undo'} of {entry.id}")
