"""Which tasks may write the same path, and whether the plan orders them: in near-linear time.

Two tasks may write the same path when one declares it and the other declares it too, or a folder it
lies in (`src/` takes in `src/a.py`; `src` without its `/` may be a folder as well, so it counts as one
here; `./` takes in everything). Such tasks must form a chain in the DAG: each one depends, directly or
through other tasks, on the one before it, or the later whole-file write would undo the earlier change.

Instead of comparing every pair of writers (10,000 writers: 50 million pairs, each a search of the
graph), the declared paths are grouped: a path's writers are those declaring it (as a file or a folder)
and those declaring a folder above it. Sorted by their place in one topological order, the writers of a
group form a chain exactly when each reaches the next one; each such check walks back from the later
task over its dependencies and never below the earlier one, so the checks of one group walk disjoint
stretches of the order: one pass over the graph per path at worst, a few steps in the usual case.
Paths are compared in the form the workspace's filesystem gives them (paicli/common/paths.py: case and
Unicode folded where the filesystem folds them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from paicli.common import paths
from paicli.plan import dag
from paicli.plan.model import Plan, Task

MAX_REPORTED = 50  # enough to fix a plan by; counting more would only cost time


def overlap_problems(plan: Plan, tasks: Iterable[Task], names: paths.Names) -> list[str]:
    """Pairs of tasks that may write the same path while neither depends on the other, one line each."""
    writers = [task for task in tasks if task.files]
    if len(writers) < 2:
        return []
    try:
        order = dag.topological_order(plan.graph())
    except dag.CycleError as cycle:
        return [str(cycle)]
    position = {task_id: index for index, task_id in enumerate(order)}
    dependencies = plan.graph()
    groups = _groups(writers, names)
    found: list[str] = []
    reported: set[tuple[str, str]] = set()
    for shown, members in groups:
        if len(members) < 2:
            continue
        chain = sorted(members, key=position.__getitem__)
        for earlier, later in itertools.pairwise(chain):
            if (earlier, later) in reported or _reaches(dependencies, position, later, earlier):
                continue
            reported.add((earlier, later))
            found.append(
                f'tasks "{dag.shown_id(earlier)}" and "{dag.shown_id(later)}" both change {shown} and neither '
                "depends on the other; make one depend on the other (or merge them) so one change does not "
                "undo the other"
            )
            if len(found) >= MAX_REPORTED:
                return found
    return found


def _groups(writers: Sequence[Task], names: paths.Names) -> list[tuple[str, set[str]]]:
    """(a declared path as shown, the ids of every task that may write it), one per declared path."""
    by_key: dict[str, set[str]] = {}  # a path's key without its trailing `/` → who declares it
    shown: dict[str, str] = {}
    everything: set[str] = set()  # who declares `./`
    for task in writers:
        for path in task.files or ():
            if path == paths.WHOLE_WORKSPACE:
                everything.add(task.id)
                continue
            key = names.key(path).rstrip("/")
            by_key.setdefault(key, set()).add(task.id)
            shown.setdefault(key, path.rstrip("/"))
    groups: list[tuple[str, set[str]]] = []
    for key, declaring in by_key.items():
        members = declaring | everything
        for folder in paths.parents(key):
            members |= by_key.get(folder, set())
        groups.append((shown[key], members))
    if everything and not by_key:
        groups.append((paths.WHOLE_WORKSPACE, everything))
    return groups


def _reaches(dependencies: dict[str, list[str]], position: dict[str, int], start: str, target: str) -> bool:
    """Whether `start` depends on `target`, directly or not. Tasks placed before `target` in the order
    cannot lead to it, so the walk never goes below it."""
    floor = position[target]
    stack, seen = [start], {start}
    while stack:
        for dep in dependencies[stack.pop()]:
            if dep == target:
                return True
            if dep not in seen and position.get(dep, -1) > floor:
                seen.add(dep)
                stack.append(dep)
    return False
