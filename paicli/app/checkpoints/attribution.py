"""Who changed what: from an entry's steps to its changes, file by file.

A step owns a path it changed when
- it wrote the path with a file tool (exact: the tool box told us before the write), or
- it ran a command that could write the path and the path changed during the step, unless the content
  it ended with is exactly what another step's tool write left (that write explains it).
So a command's changes are exact when no other writer ran meanwhile; when several commands ran at the
same time, a path that changed under all of them belongs to all of them (`Change.tasks` lists them).
A path that changed while no owner could have changed it (the user's editor, say) is not the entry's: a
command the classifier reads as read-only (`sleep 3`, `ls`) makes no step an owner (service.py).

What a command could write is what its task declared (`Step.declared`: a plan task's `files`; None in
chat). Held to it by the sandbox (`Step.held`), a change elsewhere is not the command's (`Step.outside`:
not credited), and it is a sign that someone else wrote in the workspace meanwhile: the command's own
changes can then not be told apart from theirs (`Step.uncertain`). Not held (no sandbox), a change
outside the declaration may be the command's or anyone's: uncertain too.

Other paicli processes in the same workspace keep their own entries in the same journal, with the
wall-clock span of each step. When a command's step ends (`command_changes`), a path another process's
tool wrote during an overlapping step is theirs (`Step.foreign`: not credited here); a path that changed
while another process ran a command that could write it cannot be told apart (uncertain). An uncertain
change is kept, marked `attributed: false`, and undo asks (or wants --force) before taking it back.

An entry's change of a path goes from what it held before its first owner to what its last owner left.
"""

from __future__ import annotations

from paicli.app.checkpoints.images import Image
from paicli.app.checkpoints.journal import Change, Entry, Step
from paicli.common.paths import Names
from paicli.sandbox.writable import could_write


def owners(steps: list[Step]) -> dict[str, list[Step]]:
    """path → the steps that own its changes, in the order they started."""
    found: dict[str, list[Step]] = {}
    for step in sorted(steps, key=lambda s: s.start):
        for path, window in step.window.items():
            if path in step.writes or (
                step.executed
                and path not in step.foreign
                and path not in step.outside
                and not _explained(path, window.after, step, steps)
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


def command_changes(
    step: Step, siblings: list[Step], others: list[Entry], now: float, names: Names
) -> tuple[list[str], list[str], list[str]]:
    """(outside, foreign, uncertain) among the paths that changed during `step`, a step that ran commands,
    other than by its own tool writes: see the module docstring. `siblings` are the steps of its own entry
    (parallel tasks of the plan), `others` the entries of other paicli processes."""
    changed = [path for path in step.window if path not in step.writes]
    if step.held:
        outside = [path for path in changed if not could_write(step.declared, path, names)]
        mine = [path for path in changed if path not in outside]
    else:
        outside, mine = [], changed
    foreign, uncertain = _concurrent(step, mine, others, now, names)
    uncertain |= {path for path in mine if not could_write(step.declared, path, names)}  # not held: anyone's
    beside = [s for s in siblings if s is not step and _overlap(s.start, s.end, step.start, step.end)]
    beside += [s for entry in others for s in entry.steps if _during(s, step, now)]
    if any(not any(_may_have_written(path, s, names) for s in beside) for path in outside):
        uncertain |= set(mine)  # someone else wrote in the workspace meanwhile: maybe here too
    return sorted(outside), sorted(foreign), sorted(uncertain - foreign)


def _concurrent(
    step: Step, mine: list[str], others: list[Entry], now: float, names: Names
) -> tuple[set[str], set[str]]:
    """(foreign, uncertain) among `mine`, judged by the steps of other paicli processes overlapping `step`."""
    foreign: set[str] = set()
    uncertain: set[str] = set()
    if not mine or step.started_at is None:
        return foreign, uncertain
    for entry in others:
        for other in entry.steps:
            if not _during(other, step, now):
                continue
            for path in mine:
                if path in other.writes:
                    foreign.add(path)
                elif (
                    other.executed
                    and (not other.held or could_write(other.declared, path, names))
                    and (other.ended_at is None or path in other.window)
                ):
                    uncertain.add(path)
    return foreign, uncertain


def _may_have_written(path: str, step: Step, names: Names) -> bool:
    return path in step.writes or (step.executed and (not step.held or could_write(step.declared, path, names)))


def _overlap(start: int, end: int | None, other_start: int, other_end: int | None) -> bool:
    """Whether two spans of an entry's clock overlap (an open one runs on)."""
    return (other_end is None or start < other_end) and (end is None or other_start < end)


def _during(other: Step, step: Step, now: float) -> bool:
    """Whether another process's step overlapped `step` in wall-clock time."""
    if other.started_at is None or step.started_at is None:
        return False
    end = step.ended_at if step.ended_at is not None else now
    other_end = other.ended_at if other.ended_at is not None else now
    return other.started_at <= end and other_end >= step.started_at


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
