"""Who changed what: from an entry's steps to its changes, file by file.

A step owns a path it changed when
- it wrote the path with a file tool (exact: the tool box told us before the write), or
- it ran a command and the path changed during the step, unless the content it ended with is exactly
  what another step's tool write left (that write explains it).
So a command's changes are exact when no other writer ran meanwhile; when several commands ran at the
same time, a path that changed under all of them belongs to all of them (`Change.tasks` lists them).
A path that changed while no owner could have changed it (the user's editor, say) is not the entry's: a
command the classifier reads as read-only (`sleep 3`, `ls`) makes no step an owner (service.py).

Other paicli processes in the same workspace keep their own entries in the same journal, with the
wall-clock span of each step. When a command's step ends (`concurrent`), a path another process's tool
wrote during an overlapping step is theirs (`Step.foreign`: not credited here); a path that changed while
another process ran a command cannot be told apart (`Step.uncertain`): the change is kept, marked
`attributed: false`, and undo asks (or wants --force) before taking it back.

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
            if path in step.writes or (
                step.executed and path not in step.foreign and not _explained(path, window.after, step, steps)
            ):
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
        attributed = not any(path in s.uncertain and path not in s.writes for s in steps)
        changes.append(Change(path=path, before=before, after=after, tasks=tasks, attributed=attributed))
    return changes


def concurrent(step: Step, others: list[Entry], now: float) -> tuple[list[str], list[str]]:
    """(foreign, uncertain) among the paths `step`'s commands may have changed, judged by the steps of
    other entries (other paicli processes) whose wall-clock spans overlap it: see the module docstring."""
    mine = [path for path in step.window if path not in step.writes]
    if not mine or step.started_at is None:
        return [], []
    end = step.ended_at if step.ended_at is not None else now
    foreign: set[str] = set()
    uncertain: set[str] = set()
    for entry in others:
        for other in entry.steps:
            if other.started_at is None:
                continue
            other_end = other.ended_at if other.ended_at is not None else now
            if other.started_at > end or other_end < step.started_at:
                continue
            for path in mine:
                if path in other.writes:
                    foreign.add(path)
                elif other.executed and (other.ended_at is None or path in other.window):
                    uncertain.add(path)
    return sorted(foreign), sorted(uncertain - foreign)


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
