"""The words both front ends use for checkpoints: the "Changed: …" line, what an undo does or would do,
why it is refused, and the list of checkpoints. Plain text; the REPL adds colour, headless prints it."""

from __future__ import annotations

import time

from paicli.app.checkpoints.images import shown_path
from paicli.app.checkpoints.journal import Entry
from paicli.app.checkpoints.undo import Action, Preview
from paicli.common.events import FileChange
from paicli.common.sanitize import terminal_safe
from paicli.common.wording import counted

SHOWN_FILES = 6
ACTION_WORDS = {"remove": "remove", "create": "recreate", "restore": "restore"}


def shown(path: str) -> str:
    """A workspace path for the terminal."""
    return terminal_safe(shown_path(path))


def counts(added: int | None, removed: int | None) -> str:
    if added is None or removed is None:
        return "binary"
    return f"+{added} −{removed}"


def change_text(change: FileChange) -> str:
    text = f"{terminal_safe(change.path)} {counts(change.added, change.removed)}"
    if change.status == "deleted":
        text += " deleted"
    if change.task_ids:
        text += f" ({', '.join(change.task_ids)})"
    return text


def changed_line(changes: list[FileChange], hint: str = "/undo to revert") -> str:
    """`Changed: app.py +3 −0 · tests/test_app.py +3 −1 (task_3, task_4) · /undo to revert`."""
    shown = [change_text(c) for c in changes[:SHOWN_FILES]]
    if len(changes) > SHOWN_FILES:
        shown.append(f"{len(changes) - SHOWN_FILES} more files")
    return " · ".join(["Changed: " + shown[0], *shown[1:], hint])


def action_line(action: Action) -> str:
    return f"  {ACTION_WORDS[action.kind]:<8} {shown(action.path)}  {counts(action.added, action.removed)}"


def preview_lines(preview: Preview, *, done: bool) -> list[str]:
    """What an undo (or redo) did, or would do (`done` False: a dry run)."""
    subject = f"{preview.task_id} of {preview.entry.id}" if preview.task_id else preview.entry.id
    if preview.redo:
        head = f"{'took back' if done else 'would take back'} the undo of {subject}"
    else:
        head = f"{'undid' if done else 'would undo'} {subject} ({terminal_safe(preview.entry.label)})"
    lines = [head + ":"]
    lines += [action_line(a) for a in preview.actions if a.path not in preview.errors]
    lines += [f"  failed   {shown(path)}: {terminal_safe(why)}" for path, why in preview.errors.items()]
    return lines


def refusal_lines(preview: Preview, *, force_hint: str) -> list[str]:
    """Why an undo is refused: files changed since, or files other tasks changed too."""
    lines = []
    if preview.changed_since:
        what = "the undo" if preview.redo else preview.entry.id
        lines.append(f"refused: {counted(len(preview.changed_since), 'file')} changed after {what}:")
        lines += [f"  {shown(path)}" for path in preview.changed_since]
    if preview.shared:
        were = "was" if len(preview.shared) == 1 else "were"
        lines.append(
            f"refused: {counted(len(preview.shared), 'file')} of {preview.task_id} {were} changed by other tasks too:"
        )
        lines += [f"  {shown(path)} (also {', '.join(others)})" for path, others in preview.shared.items()]
    if preview.unattributed:
        lines.append(
            f"refused: {counted(len(preview.unattributed), 'file')} may have been changed by someone else (you, "
            f"another program or another paicli process), not {preview.task_id or preview.entry.id}:"
        )
        lines += [f"  {shown(path)}" for path in preview.unattributed]
    lines.append(force_hint)
    return lines


def entry_line(entry: Entry) -> str:
    """One line of `paicli undo --list` and `/changes`: id, kind, when, state, files, label."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created_at))
    if entry.undone():
        state = "undone"
    elif entry.undone_tasks():
        state = f"undone: {', '.join(entry.undone_tasks())}"
    elif not entry.finished:
        state = "incomplete"
    else:
        state = ""
    files = f"{len(entry.changes)} file{'s' if len(entry.changes) != 1 else ''}"
    parts = [entry.id, entry.kind, when, files, *([state] if state else []), terminal_safe(entry.label)]
    return "  ".join(parts)
