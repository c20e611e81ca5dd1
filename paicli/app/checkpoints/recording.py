"""Recording one turn or one plan as it runs: steps with a checkpoint at each end, the content each
tool write replaced, and the entry's changes kept up to date after every step.

Methods are synchronous and run one at a time in the store's worker thread, under its lock (see
service.py). A failure (no space left, the lock held too long, a damaged repository) never reaches the
turn: it is told once as a notice and the recording stops; the turn or plan goes on without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from paicli.app.checkpoints.attribution import command_changes, entry_changes
from paicli.app.checkpoints.git import GitError
from paicli.app.checkpoints.images import Image, UnsafePath, check_relative, shown_path
from paicli.app.checkpoints.journal import Change, Entry, Step, Window
from paicli.app.checkpoints.lock import LockTimeout
from paicli.app.checkpoints.snapshot import WorkspaceTooLarge
from paicli.app.checkpoints.store import CheckpointStore
from paicli.common.events import FileChange
from paicli.common.paths import Names

FAILURES = (GitError, OSError, LockTimeout, UnsafePath, ValueError)
REUSE_SECONDS = 1.0


class Recording:
    def __init__(self, store: CheckpointStore, entry: Entry) -> None:
        self.store = store
        self.entry = entry
        self.open: dict[str | None, Step] = {}  # task id (None: the chat turn) → its running step
        self.failure: str | None = None
        # the last step's after (its monotonic and wall-clock times), when no step has been open since
        self._idle_since: tuple[str, float, float] | None = None

    @property
    def active(self) -> bool:
        return self.failure is None

    def changes(self) -> list[FileChange] | None:
        """The entry's changes so far, as events carry them; None once recording has failed."""
        return None if self.failure is not None else file_changes(self.entry)

    # ---- steps ----

    def start(self) -> None:
        """Saves the new (or resumed) entry so that it is listed from now on."""
        with self._op():
            self.store.journal.save(self.entry)

    def begin_step(self, task_id: str | None) -> None:
        if self.failure is not None or task_id in self.open:
            return
        with self._op():
            taken_at = time.time()
            reused = self._fresh_after()
            before = reused[0] if reused else self._snapshot_before(task_id)
            started_at = reused[1] if reused else taken_at
            step = Step(task_id=task_id, start=self.entry.tick(), before=before, started_at=started_at)
            self.entry.steps.append(step)
            self.open[task_id] = step
            self.store.journal.save(self.entry)

    def _fresh_after(self) -> tuple[str, float] | None:
        """The checkpoint a step that just ended took, when no step has been open since and it is at most
        REUSE_SECONDS old: every change paicli makes happens in a step, so the workspace is still as it
        holds it, and a dependent task starting at once needs no checkpoint of its own (one less on the
        plan's critical path). Older, the user may have edited files meanwhile (a replan, a question)."""
        idle, self._idle_since = self._idle_since, None
        if idle is None or self.open or time.monotonic() - idle[1] > REUSE_SECONDS:
            return None
        return idle[0], idle[2]

    def _snapshot_before(self, task_id: str | None) -> str:
        try:
            return self.store.snapshot(f"before {task_id or self.entry.id}")
        except GitError as error:
            if not error.damaged or self.entry.steps:
                raise
            self.store.reset(str(error))  # nothing of this entry is lost with it: start again afresh
            return self.store.snapshot(f"before {task_id or self.entry.id}")

    def note_write(self, task_id: str | None, raw_path: str) -> None:
        """Before a file tool writes `raw_path`: keep what it holds now (even if ignored or large)."""
        path = self._relative(raw_path)
        if path is None or self.failure is not None:
            return
        self.begin_step(task_id)
        step = self.open.get(task_id)
        if step is None or path in step.writes:
            return
        with self._op():
            step.writes[path] = self.store.store_disk([path])[path]
            self.store.journal.save(self.entry)  # other paicli processes see the write before it happens

    def note_execute(self, task_id: str | None, declared: tuple[str, ...] | None = None, held: bool = False) -> None:
        """Before a command (or any tool that may change anything) runs: what it was declared to write (None:
        anything) and whether the sandbox holds it to that."""
        self.begin_step(task_id)
        if (step := self.open.get(task_id)) is None:
            return
        known = (step.executed, step.declared, step.held)
        if not step.executed:
            step.declared, step.held = (list(declared) if declared is not None else None), held
        else:  # a later command of the same step: the step could write what any of them could
            if step.declared is not None:
                step.declared = None if declared is None else sorted({*step.declared, *declared})
            step.held = step.held and held
        step.executed = True
        if (step.executed, step.declared, step.held) != known:
            with self._op():  # other paicli processes must know a command may write here before it runs
                self.store.journal.save(self.entry)

    def end_step(self, task_id: str | None) -> None:
        step = self.open.pop(task_id, None)
        if step is None or self.failure is not None or step.before is None:
            return
        with self._op():
            step.after = self.store.snapshot(f"after {task_id or self.entry.id}")
            step.ended_at = time.time()
            step.end = self.entry.tick()
            step.window = self.store.window(step.before, step.after)
            self._add_untracked_writes(step)
            if step.executed and any(path not in step.writes for path in step.window):
                others = [e for e in self.store.journal.entries() if e.id != self.entry.id]
                judged = command_changes(step, self.entry.steps, others, step.ended_at, Names.of(self.store.root))
                step.outside, step.foreign, step.uncertain = judged
            contents = [*step.writes.values(), *(w.after for w in step.window.values())]
            self.store.keep(self.entry.id, [step.before, step.after, *(i.sha for i in contents if i is not None)])
            self._update_changes()
            self.store.journal.save(self.entry)
            self._idle_since = (step.after, time.monotonic(), step.ended_at) if not self.open else None

    def finish(self) -> None:
        for task_id in list(self.open):
            self.end_step(task_id)
        if self.failure is not None:
            return
        with self._op():
            self.entry.finished = True
            if _without_counts(self.entry.changes) != _without_counts(entry_changes(self.entry)):
                self._update_changes()  # nothing ended a step since they were counted (a resumed entry)
            if self.entry.changes or self.entry.undos:
                self.store.journal.save(self.entry)
            else:  # nothing to undo: it takes no place among the entries kept
                self.store.forget(self.entry.id)
            self.store.prune()

    # ---- helpers ----

    def _add_untracked_writes(self, step: Step) -> None:
        """Tool writes of paths the checkpoints leave out (ignored, too big) join the step's window with
        the content the tool replaced and the content now on disk."""
        assert step.after is not None
        rest = [path for path in step.writes if path not in step.window]
        if not rest:
            return
        now = self.store.store_disk(rest)
        taken = self.store.tree_images(step.after, rest)
        for path in rest:
            if now[path] != step.writes[path] and taken.get(path) != now[path]:
                step.window[path] = Window(before=step.writes[path], after=now[path])

    def _update_changes(self) -> None:
        changes = entry_changes(self.entry)
        stats = self.store.numstat({c.path: (c.before, c.after) for c in changes})
        for change in changes:
            change.added, change.removed = stats.get(change.path, (None, None))
        self.entry.changes = changes

    def _relative(self, raw: str) -> str | None:
        root = self.store.root
        try:
            real = Path(os.path.realpath(raw if os.path.isabs(raw) else root / raw))
            relative = real.relative_to(root).as_posix()
            check_relative(relative)
        except (ValueError, OSError, UnsafePath):
            return None
        return relative

    @contextmanager
    def _op(self) -> Iterator[None]:
        """One operation: under the store's lock, on a usable repository, failures turned into a notice."""
        try:
            with self.store.lock.held():
                self.store.ensure()
                yield
        except FAILURES as error:
            if isinstance(error, GitError) and error.damaged:
                self.store.reset(str(error))
            self.failure = str(error) or type(error).__name__
            self.open.clear()
            if isinstance(error, WorkspaceTooLarge):
                if not self.store.snapshots.too_large_told:  # once per process, not at every turn
                    self.store.snapshots.too_large_told = True
                    self.store.notify(f"checkpoints are off: {self.failure}")
            elif (isinstance(error, GitError) and error.disk_full) or isinstance(error, OSError):
                self.store.notify(f"checkpoint failed ({self.failure}); going on without checkpoints for this one")
            else:
                self.store.notify(f"checkpoints are off for this one: {self.failure}")


def _without_counts(changes: list[Change]) -> list[tuple[str, Image | None, Image | None, list[str], bool]]:
    return [(c.path, c.before, c.after, c.tasks, c.attributed) for c in changes]


def file_changes(entry: Entry) -> list[FileChange]:
    return [file_change(change, entry.kind) for change in entry.changes]


def file_change(change: Change, kind: str) -> FileChange:
    tasks = change.tasks if kind == "plan" else []
    return FileChange(
        path=shown_path(change.path),
        status=change.status,
        added=change.added,
        removed=change.removed,
        task_id=tasks[0] if len(tasks) == 1 else None,
        task_ids=list(tasks),
        attributed=change.attributed,
    )
