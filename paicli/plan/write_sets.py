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

A plan from before contracts may have FILE_WRITE tasks that declare nothing: they may write anywhere, so
`order_unbounded` orders each against every other writer, again without comparing pairs (see there).
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


def order_unbounded(plan: Plan, unbounded: Sequence[Task], writers: Sequence[Task]) -> None:
    """Adds dependencies so that each of the `unbounded` tasks (they may write anywhere) is ordered with
    every other of the `writers`, directly or through other tasks. In linear time:

    - the unbounded tasks are chained in one topological order (each depends on the one before it, unless
      it does already, through other tasks): U1 < U2 < ... < Uk;
    - then a writer W is already after a prefix U1..Ua (a = the latest of them it depends on) and before a
      suffix Ub..Uk (b = the first of them depending on it); when some lie between, U(a+1) is made to depend
      on W, which puts W before all of them through the chain.
    Each added dependency goes from a task to one it does not reach, and a writer only ever gets dependents
    numbered above everything it reaches, so no cycle is made. A plan with a cycle is left alone (the
    contract reports the cycle)."""
    if not unbounded:
        return
    dependencies = plan.graph()
    try:
        order = dag.topological_order(dependencies)
    except dag.CycleError:
        return
    by_id = {task.id: task for task in plan.tasks}
    position = {task_id: index for index, task_id in enumerate(order)}
    chain = sorted((task.id for task in unbounded), key=position.__getitem__)
    number = {task_id: index for index, task_id in enumerate(chain, 1)}
    # latest[t]: the highest-numbered unbounded task that t depends on (0: none), along the order.
    latest: dict[str, int] = {}
    for task_id in order:
        reached = max((latest.get(dep, 0) for dep in dependencies[task_id] if dep in by_id), default=0)
        own = number.get(task_id)
        if own is not None:
            if own > 1 and reached < own - 1:
                by_id[task_id].dependencies.append(chain[own - 2])
                dependencies[task_id].append(chain[own - 2])
            reached = own
        latest[task_id] = reached
    # first[t]: the lowest-numbered unbounded task that depends on t (len + 1: none), against the order.
    dependents: dict[str, list[str]] = {task_id: [] for task_id in order}
    for task_id in order:
        for dep in dependencies[task_id]:
            if dep in dependents:
                dependents[dep].append(task_id)
    first: dict[str, int] = {}
    for task_id in reversed(order):
        first[task_id] = min(
            (number[d] if d in number else first[d] for d in dependents[task_id]), default=len(chain) + 1
        )
    for writer in writers:
        if writer.id in number:
            continue
        after = latest[writer.id]
        if after + 1 < first[writer.id]:
            by_id[chain[after]].dependencies.append(writer.id)
