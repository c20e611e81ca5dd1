"""The checkpoints of one workspace in one paicli process, for async callers (the driver, the REPL).

Every operation runs in one worker thread of its own, in the order it was asked for, so git never
blocks the event loop and the steps of parallel tasks queue up instead of racing. An operation, once
asked for, runs to its end even if the caller is cancelled (ESC): a checkpoint or an undo is never
left half done by a cancel. Notices from the worker reach the sink on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from paicli.app.checkpoints.attribution import task_pairs
from paicli.app.checkpoints.journal import Entry
from paicli.app.checkpoints.recording import FAILURES, Recording, file_changes
from paicli.app.checkpoints.snapshot import Abandoned
from paicli.app.checkpoints.store import CheckpointStore, store_folder
from paicli.app.checkpoints.undo import (
    Preview,
    carry_out,
    finish_interrupted,
    preview_redo,
    preview_undo,
    select,
    select_shown,
)
from paicli.common.events import EventSink, FileChange, Notice
from paicli.config import Settings
from paicli.policy.classify import classify_command
from paicli.policy.risk import Risk
from paicli.runtime import Runtime
from paicli.tools.base import Effect, Tool, ToolContext
from paicli.tools.git_env import program_outside

T = TypeVar("T")


def _read_only_command(tool: Tool, arguments: Mapping[str, Any], workspace: Path) -> bool:
    """A command the classifier reads as changing nothing (`sleep 3`, `ls`): what changes while it runs is
    someone else's doing, so its step owns none of it (attribution.py)."""
    command = arguments.get(tool.command_argument) if tool.command_argument else None
    return isinstance(command, str) and classify_command(command, workspace).risk is Risk.SAFE


def _declared_to_write(tool: Tool, ctx: ToolContext) -> tuple[tuple[str, ...] | None, bool]:
    """What a call was declared to write (a plan task's `files`; None: anything) and whether the sandbox
    holds it to that: a command of a task that declares its files, in the sandbox. An MCP tool acts outside
    it, so it is never held."""
    declared = ctx.scope.writable if ctx.scope is not None else None
    return declared, declared is not None and ctx.sandbox is not None and not tool.external


LABEL_LIMIT = 80


def open_store(settings: Settings, home: Path, notify: Callable[[str], None]) -> CheckpointStore | None:
    """The workspace's store, or None when git is not installed. Never a git inside the workspace (an
    activated `.venv/bin`, a `.` on PATH): paicli runs it itself, outside the sandbox."""
    git = program_outside("git", settings.workspace, os.environ.get("PATH", os.defpath))
    if git is None:
        return None
    return CheckpointStore(
        git,
        settings.workspace,
        store_folder(home, settings.workspace),
        notify=notify,
        max_file_bytes=int(settings.checkpoint_max_file_mb * 1_000_000),
        max_new_files=settings.checkpoint_max_files,
        max_new_bytes=int(settings.checkpoint_max_new_mb * 1_000_000),
        keep=settings.checkpoints_keep,
    )


def attach_checkpoints(runtime: Runtime, sink: EventSink) -> Checkpoints | None:
    """The checkpoints of the runtime's workspace, told about every tool call of its tool box; None when
    they are turned off (`checkpoints = false`) or git is missing (with a one-line notice)."""
    if not runtime.settings.checkpoints:
        return None
    store = open_store(runtime.settings, runtime.home, lambda message: None)
    if store is None:
        sink.emit(Notice(level="warning", message="checkpoints are off: git is not installed (undo needs it)"))
        return None
    checkpoints = Checkpoints(store, sink)
    runtime.tools.observe(checkpoints.before_tool)
    return checkpoints


def label_of(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= LABEL_LIMIT else line[: LABEL_LIMIT - 1] + "…"


class Checkpoints:
    def __init__(self, store: CheckpointStore, sink: EventSink) -> None:
        self.store = store
        self.sink = sink
        store.notify = self._notify
        self.recording: Recording | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paicli-checkpoints")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._warming: Future[None] | None = None
        self._held: list[str] = []  # notices of the warm-up, told after the next operation
        self._closing = threading.Event()

    def warm_up(self) -> None:
        """Takes a checkpoint in the background, to be thrown away: the first checkpoint of a workspace
        stores every file (seconds on a large one), the next ones only what changed since. Started while
        the user types or the planner thinks, it is (mostly) done before the first step needs one. Once per
        process; a failure is left to the real checkpoint to report."""
        if self._warming is None:
            self._warming = self._worker.submit(self._warm)

    def _warm(self) -> None:
        self.store.notify = self._held.append  # the worker is the only one using the store meanwhile
        try:
            with self.store.lock.held():
                self.store.ensure()
                self.store.snapshots.stop = self._closing  # the one snapshot that may be given up
                self.store.snapshot("warm-up")
        except (*FAILURES, Abandoned):
            pass
        finally:
            self.store.snapshots.stop = None
            self.store.notify = self._notify

    # ---- running operations ----

    async def call(self, operation: Callable[..., T], *args: Any) -> T:
        """Runs `operation(*args)` in the worker; a cancelled caller does not stop it."""
        self._loop, self._loop_thread = asyncio.get_running_loop(), threading.get_ident()
        inner: Future[T] = self._worker.submit(operation, *args)
        inner.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "never retrieved"
        try:
            return await asyncio.shield(asyncio.wrap_future(inner))
        finally:
            while self._held:  # the warm-up ran before this operation: its notices are all in
                self.sink.emit(Notice(level="warning", message=self._held.pop(0)))

    def _notify(self, message: str) -> None:
        notice = Notice(level="warning", message=message)
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread and not loop.is_closed():
            loop.call_soon_threadsafe(self.sink.emit, notice)
        else:
            self.sink.emit(notice)

    def close(self) -> None:
        """Waits for the checkpoint operations under way; a warm-up still storing the workspace's files (a
        first checkpoint of a large one: seconds) gives up instead, so that leaving does not wait for it."""
        self._closing.set()
        self._worker.shutdown(wait=True)

    # ---- recording (the driver) ----

    async def begin_turn(self, text: str) -> Recording:
        """The turn's recording, its checkpoint taken while the model is asked (see `soon`)."""
        entry = Entry(id=self.store.journal.new_id("turn"), kind="turn", label=label_of(text))
        recording = self.recording = Recording(self.store, entry)
        self.soon(recording.start)
        self.soon(recording.begin_step, None)
        return recording

    async def begin_plan(self, plan_id: str | None, goal: str) -> Recording:
        """A new plan's entry, or the saved one of a resumed plan (its recording goes on). It is filed
        under the plan's id (one of its own when the plan has none)."""
        entry = None if plan_id is None else await self.call(self.store.journal.load, plan_id)
        if entry is None or entry.kind != "plan":
            entry = Entry(id=plan_id or self.store.journal.new_id("plan"), kind="plan", label=label_of(goal))
        entry.finished = False
        recording = self.recording = Recording(self.store, entry)
        await self.call(recording.start)
        return recording

    async def finish(self, recording: Recording) -> list[FileChange] | None:
        await self.call(recording.finish)
        if self.recording is recording:
            self.recording = None
        return recording.changes()

    def begin_step_soon(self, task_id: str) -> None:
        """Begins a task's step without waiting for its checkpoint (see `soon`)."""
        if self.recording is not None:
            self.soon(self.recording.begin_step, task_id)

    def end_step_soon(self, task_id: str) -> Future[None] | None:
        """Ends a task's step without waiting for its checkpoint (see `soon`): what does not wait is the
        task's dependents and the plan's summary. The plan's `finish` runs after it."""
        if self.recording is None:
            return None
        return self.soon(self.recording.end_step, task_id)

    def soon(self, operation: Callable[..., None], *args: Any) -> Future[None]:
        """Asks the worker for `operation(*args)` without waiting for it. It still runs before any operation
        asked for later, and every change a step records goes through one (the tool box tells the
        checkpoints before a write or a command and waits), so a checkpoint begun this way is taken before
        the step changes anything: the model's request, which changes nothing, need not wait for it."""
        with contextlib.suppress(RuntimeError):  # no loop running: notices go straight to the sink
            self._loop, self._loop_thread = asyncio.get_running_loop(), threading.get_ident()
        inner = self._worker.submit(operation, *args)
        inner.add_done_callback(lambda f: f.cancelled() or f.exception())
        return inner

    async def before_tool(self, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext) -> None:
        """The tool box's observer: before a write, keep what the file holds; before a command, note it."""
        recording = self.recording
        if recording is None or not recording.active:
            return
        if tool.effect is Effect.WRITE and tool.path_argument is not None:
            raw = arguments.get(tool.path_argument)
            if isinstance(raw, str) and raw:
                await self.call(recording.note_write, ctx.task_id, raw)
        elif tool.effect is Effect.EXECUTE and not _read_only_command(tool, arguments, ctx.workspace):
            await self.call(recording.note_execute, ctx.task_id, *_declared_to_write(tool, ctx))

    # ---- undo, redo, changes (the REPL) ----

    async def entries(self) -> list[Entry]:
        return await self.call(self._locked, lambda: self.store.journal.entries())

    async def preview(self, entry_id: str | None, task_id: str | None, *, redo: bool = False) -> Preview:
        def work() -> Preview:
            entries = self._settled_entries()
            if redo:
                return preview_redo(self.store, entries)
            return preview_undo(self.store, select(entries, entry_id, task_id), task_id)

        return await self.call(self._locked, work)

    async def carry_out(self, preview: Preview, *, force: bool) -> Preview:
        return await self.call(self._locked, lambda: carry_out(self.store, preview, force=force))

    async def diff(self, entry_id: str | None, task_id: str | None) -> tuple[Entry, list[FileChange], str]:
        """An entry's (or one task's) changes and their unified diff."""

        def work() -> tuple[Entry, list[FileChange], str]:
            entry = select_shown(self.store.journal.entries(), entry_id, task_id)
            changes = file_changes(entry)
            if task_id is None:
                pairs = {c.path: (c.before, c.after) for c in entry.changes}
            else:
                pairs = task_pairs(entry, task_id)
                changes = [c for c in changes if task_id in c.task_ids]
            return entry, changes, self.store.diff(pairs)

        return await self.call(self._locked, work)

    def _settled_entries(self) -> list[Entry]:
        entries = self.store.journal.entries()
        finish_interrupted(self.store, entries, self._notify)
        return entries

    def _locked(self, work: Callable[[], T]) -> T:
        with self.store.lock.held():
            self.store.ensure()
            return work()
