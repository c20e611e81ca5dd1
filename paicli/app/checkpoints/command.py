"""`paicli undo` without a screen: list, preview (`--dry-run`), undo, redo, as an answer to print and an
exit code: 0 done, 1 nothing to undo or refused, 2 usage (an unknown id included)."""

from __future__ import annotations

from dataclasses import dataclass, field

from paicli.app.checkpoints.report import entry_line, preview_lines, refusal_lines
from paicli.app.checkpoints.store import CheckpointStore
from paicli.app.checkpoints.undo import UndoRefusal, carry_out, finish_interrupted, preview_redo, preview_undo, select
from paicli.common.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE


@dataclass
class UndoAnswer:
    code: int
    out: list[str] = field(default_factory=list)  # for stdout
    err: list[str] = field(default_factory=list)  # for stderr


def undo_answer(
    store: CheckpointStore,
    entry_id: str | None,
    *,
    task: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    list_only: bool = False,
    redo: bool = False,
) -> UndoAnswer:
    if (list_only and (entry_id or task or redo)) or (redo and (entry_id or task)):
        return UndoAnswer(EXIT_USAGE, err=["--list and --redo go alone (--redo takes the last undo back)"])
    try:
        with store.lock.held():
            store.ensure()
            entries = store.journal.entries()
            finish_interrupted(store, entries, store.notify)
            if list_only:
                shown = [entry_line(e) for e in reversed(entries) if e.changes or e.undos]
                return UndoAnswer(EXIT_OK, shown or ["nothing to undo yet"])
            if redo:
                preview = preview_redo(store, entries)
            else:
                preview = preview_undo(store, select(entries, entry_id, task), task)
            if dry_run:
                refused = preview.refused and not force
                hint = "(--force would overwrite them)"
                return UndoAnswer(
                    EXIT_FAILED if refused else EXIT_OK,
                    preview_lines(preview, done=False) + (refusal_lines(preview, force_hint=hint) if refused else []),
                )
            carry_out(store, preview, force=force)
    except UndoRefusal as refusal:
        return UndoAnswer(EXIT_USAGE if refusal.usage else EXIT_FAILED, err=[str(refusal)])
    except Exception as error:  # a damaged store, the lock held too long, a full disk: one line
        return UndoAnswer(EXIT_FAILED, err=[f"undo failed: {type(error).__name__}: {error}"])
    if preview.refused and not force:
        return UndoAnswer(EXIT_FAILED, err=refusal_lines(preview, force_hint="--force overwrites them"))
    return UndoAnswer(EXIT_FAILED if preview.errors else EXIT_OK, preview_lines(preview, done=True))
