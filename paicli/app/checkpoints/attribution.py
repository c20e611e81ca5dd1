"""Who changed what: from an entry's steps to its changes, file by file.

A step owns a path it changed when
- it wrote the path with a file tool (exact: the tool box told us before the write), or
- it ran a command and the path changed during the step, unless the content it ended with is exactly
  what another step's tool write left (that write explains it).
So a command's changes are exact when no other writer ran meanwhile; when several commands ran at the
same time, a path that changed under all of them belongs to all of them (`Change.tasks` lists them).
A path that changed while no owner could have changed it (the user's editor, say) is not the entry's.

An entry's change of a path goes from what it held before its first owner to what its last owner left.
"""

from __future__ import annotations

from paicli.app.checkpoints.images import Image
from paicli.app.checkpoints.journal import Change, Entry, Step


def owners(steps: list[Step]) -> dict[str, list[Step]]:
    """path → the steps that own its changes, in the order they started."""
    found: dict[str, list[Step]] = {}
    for step in sorted(steps, key=lambda s: s.start):
        for path, window in step.window.items():
            if path in step.writes or (step.executed and not _explained(path, window.after, step, steps)):
                found.setdefault(path, []).append(step)
    return found


def _explained(path: str, after: Image | None, step: Step, steps: list[Step]) -> bool:
    return any(
        other is not step and path in other.writes and path in other.window and other.window[path].after == after
        for other in steps
    )


def content_before(step: Step, path: str) -> Image | None:
    """What `path` held before `step` changed it: what its first tool write replaced, else the start."""
    if path in step.writes:
        return step.writes[path]
    return step.window[path].before


def content_after(step: Step, path: str) -> Image | None:
    return step.window[path].after


def entry_changes(entry: Entry) -> list[Change]:
    """The entry's net changes (line counts not filled in), sorted by path."""
    changes = []
    for path, steps in sorted(owners(entry.steps).items()):
        first = steps[0]
        last = max(steps, key=lambda s: (s.end or 0, s.start))
        before, after = content_before(first, path), content_after(last, path)
        if before == after:
            continue
        tasks = list(dict.fromkeys(s.task_id for s in steps if s.task_id is not None))
        changes.append(Change(path=path, before=before, after=after, tasks=tasks))
    return changes


def task_paths(entry: Entry, task_id: str) -> dict[str, tuple[Image | None, list[str]]]:
    """For one task: path → (what it held before the task changed it, the other tasks that changed it
    too, while the task ran or after it began). A task that had finished with the path before this one
    began is not among them: putting back what the path held before this task keeps its work."""
    result: dict[str, tuple[Image | None, list[str]]] = {}
    for path, steps in owners(entry.steps).items():
        mine = [s for s in steps if s.task_id == task_id]
        if not mine:
            continue
        began = mine[0].start
        others = [s.task_id for s in steps if s.task_id not in (task_id, None) and not _ended_before(s, began)]
        result[path] = (content_before(mine[0], path), list(dict.fromkeys(o for o in others if o is not None)))
    return result


def _ended_before(step: Step, clock: int) -> bool:
    return step.end is not None and step.end < clock


def task_pairs(entry: Entry, task_id: str) -> dict[str, tuple[Image | None, Image | None]]:
    """For one task: path → (content before the task changed it, content the task left)."""
    pairs = {}
    for path, steps in owners(entry.steps).items():
        mine = [s for s in steps if s.task_id == task_id]
        if mine:
            last = max(mine, key=lambda s: (s.end or 0, s.start))
            pairs[path] = (content_before(mine[0], path), content_after(last, path))
    return {path: pair for path, pair in sorted(pairs.items()) if pair[0] != pair[1]}


def expected_now(entry: Entry, path: str) -> Image | None:
    """What `path` should hold now as far as this entry knows: what its latest finished undo or redo
    left, else the entry's result (the last owner's content)."""
    for undo in reversed(entry.undos):
        if path in undo.after and undo.state in ("done", "redone"):
            return undo.after[path] if undo.state == "done" else undo.before[path]
    change = next((c for c in entry.changes if c.path == path), None)
    if change is not None:
        return change.after
    steps = owners(entry.steps).get(path)
    if steps:
        return content_after(max(steps, key=lambda s: (s.end or 0, s.start)), path)
    return None
