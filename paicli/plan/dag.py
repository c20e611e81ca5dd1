"""Pure functions on dependency graphs. No recursion anywhere, so a 10,000-task chain is fine.

A graph is a plain `Mapping[str, Sequence[str]]`: task id → the ids it depends on, in insertion order
(the order the model gave, which every function keeps where it has a choice). Edges point from a task
to its dependencies.

A dependency that is not a key of the graph is *external*: a task finished in an earlier round, or a
typo. The ordering functions treat external dependencies as already satisfied; `validate` is where
unknown ones are reported, given the ids that may legitimately be external.

Costs: `find_cycle`, `ready`, `transitive_dependents`, `validate`: O(V + E). `topological_order`, `levels`
and `critical_path`: O(E + V log V) (sorting keeps tasks that become ready together in the given order).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from paicli.common.errors import PlanError

Graph = Mapping[str, Sequence[str]]


class CycleError(PlanError):
    """The dependencies loop; `cycle` is the path, first id repeated last (["a", "b", "a"])."""

    def __init__(self, cycle: list[str]) -> None:
        super().__init__(f"the dependencies form a cycle: {format_cycle(cycle)}")
        self.cycle = cycle


def format_cycle(cycle: Sequence[str]) -> str:
    return " → ".join(map(shown_id, cycle))


def shown_id(task_id: str, limit: int = 60) -> str:
    """An id as quoted in a message: a hostile id of a megabyte must not make the message a megabyte."""
    return task_id if len(task_id) <= limit else f"{task_id[: limit - 1]}…"


def find_cycle(graph: Graph) -> list[str] | None:
    """The first cycle found (following dependencies, in graph order), or None if there is none.

    The path starts and ends with the same id: task_2 depends on task_4, which depends on task_2, gives
    ["task_2", "task_4", "task_2"]; a task that depends on itself gives ["t", "t"].
    """
    on_path: dict[str, int] = {}  # id → its position on the current DFS path
    finished: set[str] = set()
    for root in graph:
        if root in finished:
            continue
        path: list[str] = [root]
        cursors: list[int] = [0]  # next dependency index to visit, per path entry
        on_path[root] = 0
        while path:
            node = path[-1]
            deps = graph[node]
            position = cursors[-1]
            if position == len(deps):
                path.pop()
                cursors.pop()
                del on_path[node]
                finished.add(node)
                continue
            cursors[-1] = position + 1
            dep = deps[position]
            if dep not in graph or dep in finished:
                continue
            if dep in on_path:
                return [*path[on_path[dep] :], dep]
            on_path[dep] = len(path)
            path.append(dep)
            cursors.append(0)
    return None


def _dependents_index(graph: Graph) -> dict[str, list[str]]:
    """id → ids depending on it (in-graph edges only, each edge once)."""
    dependents: dict[str, list[str]] = {node: [] for node in graph}
    for node, deps in graph.items():
        for dep in dict.fromkeys(deps):
            if dep in dependents:
                dependents[dep].append(node)
    return dependents


def topological_order(graph: Graph) -> list[str]:
    """Every id after all its dependencies; among tasks ready at the same time, the given order wins.

    If the given order is already valid, it is returned unchanged. Raises CycleError on a cycle.
    """
    index = {node: i for i, node in enumerate(graph)}
    missing = {node: len({d for d in deps if d in graph}) for node, deps in graph.items()}
    dependents = _dependents_index(graph)
    heap = [index[node] for node, count in missing.items() if count == 0]
    heapq.heapify(heap)
    nodes = list(graph)
    order: list[str] = []
    while heap:
        node = nodes[heapq.heappop(heap)]
        order.append(node)
        for dependent in dependents[node]:
            missing[dependent] -= 1
            if missing[dependent] == 0:
                heapq.heappush(heap, index[dependent])
    if len(order) != len(graph):
        raise CycleError(find_cycle(graph) or [])
    return order


def levels(graph: Graph) -> list[list[str]]:
    """Waves of tasks that can run together: a task's level is one more than its deepest dependency.

    Level 0 holds the tasks with no (in-graph) dependencies. Each level keeps the given order.
    Raises CycleError on a cycle.
    """
    index = {node: i for i, node in enumerate(graph)}
    missing = {node: len({d for d in deps if d in graph}) for node, deps in graph.items()}
    dependents = _dependents_index(graph)
    current = [node for node, count in missing.items() if count == 0]
    result: list[list[str]] = []
    placed = 0
    while current:
        result.append(current)
        placed += len(current)
        following: set[str] = set()
        for node in current:
            for dependent in dependents[node]:
                missing[dependent] -= 1
                if missing[dependent] == 0:
                    following.add(dependent)
        current = sorted(following, key=index.__getitem__)
    if placed != len(graph):
        raise CycleError(find_cycle(graph) or [])
    return result


def ready(graph: Graph, done: Collection[str], started: Collection[str]) -> list[str]:
    """Ids not yet started whose dependencies are all done, in graph order.

    `done`: ids that completed successfully. `started`: ids already dispatched (running or finished in
    any way); an id in `done` counts as started too. External dependencies count as done.
    """
    return [
        node
        for node, deps in graph.items()
        if node not in started and node not in done and all(dep in done or dep not in graph for dep in deps)
    ]


def transitive_dependents(graph: Graph, node: str) -> list[str]:
    """Every id that depends on `node` directly or indirectly (not `node` itself), in graph order."""
    dependents = _dependents_index(graph)
    seen: set[str] = set()
    stack = list(dependents.get(node, []))
    while stack:
        current = stack.pop()
        if current in seen or current == node:
            continue
        seen.add(current)
        stack.extend(dependents[current])
    return [candidate for candidate in graph if candidate in seen]


def critical_path(graph: Graph, durations: Mapping[str, float]) -> tuple[float, list[str]]:
    """The longest chain by total duration: (its length, its ids from first to run to last).

    Missing durations count as 0. Among equally long chains the one ending earliest in the given order
    wins. Raises CycleError on a cycle. An empty graph gives (0.0, []).
    """
    finish: dict[str, float] = {}
    previous: dict[str, str | None] = {}
    for node in topological_order(graph):
        best: str | None = None
        for dep in graph[node]:
            if dep in graph and (best is None or finish[dep] > finish[best]):
                best = dep
        previous[node] = best
        finish[node] = durations.get(node, 0.0) + (finish[best] if best is not None else 0.0)
    if not finish:
        return 0.0, []
    end = max(graph, key=lambda node: finish[node])  # max() returns the first of equal maxima
    path: list[str] = []
    cursor: str | None = end
    while cursor is not None:
        path.append(cursor)
        cursor = previous[cursor]
    path.reverse()
    return finish[end], path


def validate(graph: Graph, external: Collection[str] = ()) -> list[str]:
    """Every structural problem of the graph as a one-line message; an empty list means valid.

    Reports, in graph order: dependencies on ids that are neither in the graph nor in `external`,
    self-dependencies, then the first cycle (path shown as "task_2 → task_4 → task_2"). Ids themselves
    (blank, duplicate) are the parser's business: a mapping cannot hold duplicates.
    """
    problems: list[str] = []
    for node, deps in graph.items():
        for dep in dict.fromkeys(deps):
            if dep == node:
                problems.append(f'task "{shown_id(node)}" depends on itself')
            elif dep not in graph and dep not in external:
                known = "neither a task of this plan nor a completed task" if external else "not a task of this plan"
                problems.append(f'task "{shown_id(node)}" depends on "{shown_id(dep)}", which is {known}')
    without_self_loops = {node: [d for d in deps if d != node] for node, deps in graph.items()}
    cycle = find_cycle(without_self_loops)
    if cycle:
        problems.append(f"the dependencies form a cycle: {format_cycle(cycle)}")
    return problems


@dataclass(frozen=True)
class Analysis:
    """Everything the plan needs of its graph, from one pass (see `analyse`)."""

    problems: list[str]  # `validate`'s messages; when not empty, the fields below are empty
    order: list[str]  # `topological_order`
    levels: list[list[str]]  # `levels`
    critical_length: float  # `critical_path`
    critical_path: list[str]


def analyse(graph: Graph, durations: Mapping[str, float] | None = None, external: Collection[str] = ()) -> Analysis:
    """`validate`, `topological_order`, `levels` and `critical_path` in one pass over integer ids, with the
    same results and tie rules as each of them. Missing durations count as 1 (every task one step) when
    `durations` is None, else as 0. A graph with problems gives them and nothing else."""
    nodes = list(graph)
    index = {node: i for i, node in enumerate(nodes)}
    count = len(nodes)
    dependencies: list[list[int]] = [[]] * count
    problems: list[str] = []
    in_order = True  # every dependency listed before its task: the given order is already topological
    for i, deps in enumerate(graph.values()):
        resolved: list[int] = []
        for dep in deps:
            j = index.get(dep)
            if j is None or j == i:
                problems.extend(_dependency_problems(nodes[i], dep, graph, external))
            else:
                resolved.append(j)
                in_order = in_order and j < i
        if len(resolved) > 1 and len(set(resolved)) != len(resolved):
            resolved = list(dict.fromkeys(resolved))
        dependencies[i] = resolved
    problems = list(dict.fromkeys(problems))
    order = range(count) if in_order else _kahn(dependencies)
    if order is None:
        without_self_loops = {node: [d for d in deps if d != node] for node, deps in graph.items()}
        problems.append(f"the dependencies form a cycle: {format_cycle(find_cycle(without_self_loops) or [])}")
    if problems:
        return Analysis(problems, [], [], 0.0, [])
    assert order is not None
    default = 1.0 if durations is None else 0.0
    weight = [default] * count if durations is None else [durations.get(node, 0.0) for node in nodes]
    level = [0] * count
    finish = [0.0] * count
    previous = [-1] * count
    for i in order:
        best = -1
        deepest = -1
        for j in dependencies[i]:
            if best < 0 or finish[j] > finish[best]:
                best = j
            if level[j] > deepest:
                deepest = level[j]
        level[i] = deepest + 1
        previous[i] = best
        finish[i] = weight[i] + (finish[best] if best >= 0 else 0.0)
    waves: list[list[str]] = [[] for _ in range(max(level, default=-1) + 1)]
    for i, node in enumerate(nodes):
        waves[level[i]].append(node)
    path: list[str] = []
    if count:
        end = max(range(count), key=finish.__getitem__)  # the first of equal maxima
        cursor = end
        while cursor >= 0:
            path.append(nodes[cursor])
            cursor = previous[cursor]
        path.reverse()
    return Analysis([], [nodes[i] for i in order], waves, finish[end] if count else 0.0, path)


def _kahn(dependencies: list[list[int]]) -> list[int] | None:
    """A topological order of integer ids, the smallest ready id first; None on a cycle."""
    count = len(dependencies)
    missing = [len(deps) for deps in dependencies]
    dependents: list[list[int]] = [[] for _ in range(count)]
    for i, deps in enumerate(dependencies):
        for j in deps:
            dependents[j].append(i)
    heap = [i for i in range(count) if not missing[i]]  # ascending: already a heap
    order: list[int] = []
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        i = pop(heap)
        order.append(i)
        for k in dependents[i]:
            missing[k] -= 1
            if not missing[k]:
                push(heap, k)
    return order if len(order) == count else None


def _dependency_problems(node: str, dep: str, graph: Graph, external: Collection[str]) -> list[str]:
    if dep == node:
        return [f'task "{shown_id(node)}" depends on itself']
    if dep in external:
        return []
    known = "neither a task of this plan nor a completed task" if external else "not a task of this plan"
    return [f'task "{shown_id(node)}" depends on "{shown_id(dep)}", which is {known}']
