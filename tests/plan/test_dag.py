"""Graph functions: examples first, then Hypothesis properties on random DAGs, then 10,000-task chains."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paicli.common.errors import PlanError
from paicli.plan import dag

DIAMOND = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}


# ---- examples -------------------------------------------------------------------------------------


def test_find_cycle_returns_the_path_with_the_first_id_repeated() -> None:
    graph = {"task_1": [], "task_2": ["task_1", "task_4"], "task_3": [], "task_4": ["task_2"]}
    assert dag.find_cycle(graph) == ["task_2", "task_4", "task_2"]
    assert dag.find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert dag.find_cycle({"a": ["a"]}) == ["a", "a"]
    assert dag.find_cycle(DIAMOND) is None
    assert dag.find_cycle({}) is None


def test_external_dependencies_are_ignored_by_ordering_and_count_as_satisfied() -> None:
    graph = {"x": ["done_earlier"], "y": ["x", "done_earlier"]}
    assert dag.find_cycle(graph) is None
    assert dag.topological_order(graph) == ["x", "y"]
    assert dag.levels(graph) == [["x"], ["y"]]
    assert dag.ready(graph, done=set(), started=set()) == ["x"]


def test_topological_order_is_stable_among_ready_tasks() -> None:
    assert dag.topological_order(DIAMOND) == ["a", "b", "c", "d"]
    graph = {"d": ["b", "c"], "c": ["a"], "b": ["a"], "a": [], "e": []}
    assert dag.topological_order(graph) == ["a", "c", "b", "d", "e"]


def test_topological_order_raises_a_plan_error_showing_the_cycle() -> None:
    with pytest.raises(dag.CycleError) as caught:
        dag.topological_order({"a": [], "b": ["a", "c"], "c": ["b"]})
    assert caught.value.cycle == ["b", "c", "b"]
    assert isinstance(caught.value, PlanError)
    assert "b → c → b" in str(caught.value)


def test_levels_group_what_can_run_together() -> None:
    assert dag.levels(DIAMOND) == [["a"], ["b", "c"], ["d"]]
    assert dag.levels({"x": [], "y": [], "z": ["x"]}) == [["x", "y"], ["z"]]
    assert dag.levels({}) == []
    with pytest.raises(dag.CycleError):
        dag.levels({"a": ["b"], "b": ["a"], "c": []})


def test_ready_lists_unstarted_tasks_whose_dependencies_are_done() -> None:
    assert dag.ready(DIAMOND, done=set(), started=set()) == ["a"]
    assert dag.ready(DIAMOND, done={"a"}, started={"a"}) == ["b", "c"]
    assert dag.ready(DIAMOND, done={"a"}, started={"a", "b"}) == ["c"]
    assert dag.ready(DIAMOND, done={"a", "b"}, started={"a", "b", "c"}) == []
    assert dag.ready(DIAMOND, done={"a", "b", "c"}, started={"a", "b", "c"}) == ["d"]


def test_transitive_dependents_in_graph_order() -> None:
    assert dag.transitive_dependents(DIAMOND, "a") == ["b", "c", "d"]
    assert dag.transitive_dependents(DIAMOND, "b") == ["d"]
    assert dag.transitive_dependents(DIAMOND, "d") == []
    assert dag.transitive_dependents(DIAMOND, "unknown") == []


def test_critical_path_is_the_longest_chain_by_duration() -> None:
    durations = {"a": 1.0, "b": 5.0, "c": 2.0, "d": 1.0}
    assert dag.critical_path(DIAMOND, durations) == (7.0, ["a", "b", "d"])
    assert dag.critical_path(DIAMOND, {"c": 3.0}) == (3.0, ["a", "c"])  # ties: the earliest end wins
    assert dag.critical_path({}, {}) == (0.0, [])


def test_validate_reports_unknown_dependencies_self_dependencies_and_cycles() -> None:
    graph = {"a": ["a"], "b": ["ghost", "c"], "c": ["b"]}
    assert dag.validate(graph) == [
        'task "a" depends on itself',
        'task "b" depends on "ghost", which is not a task of this plan',
        "the dependencies form a cycle: b → c → b",
    ]
    assert dag.validate({"x": ["old_1"]}, external={"old_1"}) == []
    assert dag.validate({"x": ["old_2"]}, external={"old_1"}) == [
        'task "x" depends on "old_2", which is neither a task of this plan nor a completed task'
    ]
    assert dag.validate(DIAMOND) == []


# ---- properties on random DAGs --------------------------------------------------------------------


@st.composite
def dags(draw: st.DrawFn) -> dict[str, list[str]]:
    """A random DAG: node i may depend only on nodes created before it; then the key order is shuffled."""
    size = draw(st.integers(min_value=0, max_value=20))
    names = [f"t{i}" for i in range(size)]
    graph = {
        name: draw(st.lists(st.sampled_from(names[:i]), max_size=4, unique=True)) if i else []
        for i, name in enumerate(names)
    }
    order = draw(st.permutations(names))
    return {name: graph[name] for name in order}


def reachable(graph: dict[str, list[str]], start: str) -> set[str]:
    """Brute force: every id `start` depends on, directly or not."""
    seen: set[str] = set()
    stack = list(graph[start])
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(graph[node])
    return seen


@settings(max_examples=60, deadline=None)
@given(dags())
def test_random_dag_has_no_cycle_and_a_valid_stable_topological_order(graph: dict[str, list[str]]) -> None:
    assert dag.find_cycle(graph) is None
    assert dag.validate(graph) == []
    order = dag.topological_order(graph)
    assert sorted(order) == sorted(graph)
    position = {node: i for i, node in enumerate(order)}
    assert all(position[dep] < position[node] for node, deps in graph.items() for dep in deps)
    assert dag.topological_order({node: graph[node] for node in order}) == order  # valid order kept


@settings(max_examples=60, deadline=None)
@given(dags(), st.data())
def test_adding_a_back_edge_is_always_detected_with_a_real_cycle_path(
    graph: dict[str, list[str]], data: st.DataObject
) -> None:
    pairs = [(node, dep) for node in graph for dep in reachable(graph, node)]
    if not pairs:
        return
    node, ancestor = data.draw(st.sampled_from(pairs))
    cyclic = {key: list(deps) for key, deps in graph.items()}
    cyclic[ancestor].append(node)  # node already depends on ancestor, so this closes a loop
    cycle = dag.find_cycle(cyclic)
    assert cycle is not None
    assert cycle[0] == cycle[-1] and len(set(cycle[:-1])) == len(cycle) - 1
    assert all(b in cyclic[a] for a, b in itertools.pairwise(cycle))
    with pytest.raises(dag.CycleError):
        dag.topological_order(cyclic)
    assert any("cycle" in problem for problem in dag.validate(cyclic))


@settings(max_examples=60, deadline=None)
@given(dags())
def test_levels_are_consistent_with_dependencies(graph: dict[str, list[str]]) -> None:
    waves = dag.levels(graph)
    level = {node: i for i, wave in enumerate(waves) for node in wave}
    assert sorted(level) == sorted(graph) and sum(map(len, waves)) == len(graph)
    for node, deps in graph.items():
        assert all(level[dep] < level[node] for dep in deps)
        if deps:
            assert max(level[dep] for dep in deps) == level[node] - 1
        else:
            assert level[node] == 0
    keys = list(graph)
    assert all(wave == sorted(wave, key=keys.index) for wave in waves)


@settings(max_examples=60, deadline=None)
@given(dags(), st.data())
def test_transitive_dependents_match_brute_force(graph: dict[str, list[str]], data: st.DataObject) -> None:
    if not graph:
        return
    node = data.draw(st.sampled_from(list(graph)))
    expected = {other for other in graph if node in reachable(graph, other)}
    assert dag.transitive_dependents(graph, node) == [other for other in graph if other in expected]


@settings(max_examples=40, deadline=None)
@given(dags(), st.data())
def test_critical_path_is_a_real_chain_with_the_longest_total(graph: dict[str, list[str]], data: st.DataObject) -> None:
    durations = {node: float(data.draw(st.integers(0, 9))) for node in graph}
    total, path = dag.critical_path(graph, durations)
    assert total == sum(durations[node] for node in path)
    assert all(a in graph[b] for a, b in itertools.pairwise(path))

    def longest_ending_at(node: str, memo: dict[str, float]) -> float:  # shallow graphs: recursion is fine here
        if node not in memo:
            memo[node] = durations[node] + max((longest_ending_at(d, memo) for d in graph[node]), default=0.0)
        return memo[node]

    memo: dict[str, float] = {}
    assert total == max((longest_ending_at(node, memo) for node in graph), default=0.0)


@settings(max_examples=30, deadline=None)
@given(dags(), st.data())
def test_ready_never_offers_a_task_before_its_dependencies_are_done(
    graph: dict[str, list[str]], data: st.DataObject
) -> None:
    done: set[str] = set()
    while True:
        offered = dag.ready(graph, done=done, started=done)
        if not offered:
            break
        for node in offered:
            assert all(dep in done for dep in graph[node])
        done.add(data.draw(st.sampled_from(offered)))
    assert done == set(graph)


# ---- scale: no recursion, linear-ish time ---------------------------------------------------------

CHAIN = 10_000


@pytest.mark.parametrize("reverse", [False, True], ids=["given-in-order", "given-reversed"])
def test_a_10000_task_chain_works_without_recursion(reverse: bool) -> None:
    names = [f"task_{i}" for i in range(CHAIN)]
    items = [(name, [names[i - 1]] if i else []) for i, name in enumerate(names)]
    graph = dict(reversed(items) if reverse else items)
    assert dag.find_cycle(graph) is None
    assert dag.validate(graph) == []
    assert dag.topological_order(graph) == names
    assert len(dag.levels(graph)) == CHAIN
    assert len(dag.transitive_dependents(graph, "task_0")) == CHAIN - 1
    assert dag.critical_path(graph, dict.fromkeys(names, 1.0)) == (float(CHAIN), names)


def test_a_10000_task_cycle_is_found_in_full() -> None:
    names = [f"task_{i}" for i in range(CHAIN)]
    graph = {name: [names[i - 1]] for i, name in enumerate(names)}  # task_0 depends on the last one
    cycle = dag.find_cycle(graph)
    assert cycle is not None and len(cycle) == CHAIN + 1 and cycle[0] == cycle[-1]


# ---- analyse: the four operations in one pass -------------------------------------------------------


@st.composite
def any_graphs(draw: st.DrawFn) -> dict[str, list[str]]:
    """Graphs with everything that can go wrong: cycles, self-loops, unknown and repeated dependencies."""
    size = draw(st.integers(0, 12))
    names = [f"t{i}" for i in range(size)]
    pool = [*names, "gone", "done_earlier"]
    order = draw(st.permutations(names))
    return {name: draw(st.lists(st.sampled_from(pool), max_size=4)) if pool else [] for name in order}


@settings(max_examples=400, deadline=None)
@given(any_graphs(), st.data())
def test_analyse_agrees_with_each_operation(graph: dict[str, list[str]], data: st.DataObject) -> None:
    external = {"done_earlier"}
    durations = {node: data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for node in graph}
    analysis = dag.analyse(graph, durations, external)
    assert analysis.problems == dag.validate(graph, external)
    if analysis.problems:
        assert analysis.order == [] and analysis.levels == [] and analysis.critical_path == []
        return
    inner = {node: [d for d in deps if d in graph] for node, deps in graph.items()}
    assert analysis.order == dag.topological_order(inner)
    assert analysis.levels == dag.levels(inner)
    assert (analysis.critical_length, analysis.critical_path) == dag.critical_path(inner, durations)


def test_analyse_counts_each_task_as_one_step_without_durations() -> None:
    analysis = dag.analyse(DIAMOND)
    assert analysis.critical_length == 3.0 and analysis.critical_path == ["a", "b", "d"]
    assert analysis.levels == [["a"], ["b", "c"], ["d"]]
    assert dag.analyse({}) == dag.Analysis([], [], [], 0.0, [])


def test_analyse_handles_a_10000_task_chain_in_reverse_order() -> None:
    graph = {f"t{i}": [f"t{i - 1}"] if i else [] for i in reversed(range(10_000))}
    analysis = dag.analyse(graph)
    assert analysis.order == [f"t{i}" for i in range(10_000)]
    assert len(analysis.levels) == 10_000 and analysis.critical_length == 10_000.0
