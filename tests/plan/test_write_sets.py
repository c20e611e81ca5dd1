"""Writers of one path must form a chain in the DAG (paicli/plan/write_sets.py), checked without comparing
every pair: spellings, folders, case and Unicode as the filesystem compares them, long chains."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from paicli.common.paths import Names
from paicli.plan import dag
from paicli.plan.contract import Contract
from paicli.plan.model import Plan, Task, TaskType
from paicli.plan.write_sets import overlap_problems


def writer(task_id: str, files: list[str], *deps: str) -> Task:
    return Task(id=task_id, description="w", type=TaskType.FILE_WRITE, files=files, dependencies=list(deps))


NAMES_OF_LINUX = Names()


def problems(*tasks: Task, names: Names = NAMES_OF_LINUX) -> list[str]:
    plan = Plan(goal="g", tasks=list(tasks))
    return overlap_problems(plan, plan.tasks, names)


def test_a_chain_of_writers_through_other_tasks_is_ordered() -> None:
    middle = Task(id="m", description="read", dependencies=["a"])
    assert problems(writer("a", ["x"]), middle, writer("b", ["x"], "m"), writer("c", ["x/"], "b")) == []


def test_a_writer_off_the_chain_is_named_with_its_neighbour() -> None:
    found = problems(writer("a", ["x"]), writer("b", ["x"], "a"), writer("c", ["x"]))
    assert len(found) == 1 and found[0].startswith('tasks "b" and "c" both change x and neither')


@pytest.mark.parametrize(
    ("outer", "inner"),
    [("src/", "src/a.py"), ("src", "src/a.py"), ("./", "a.py"), ("src/", "src"), ("a/", "a/b/c/d.py")],
)
def test_a_folder_takes_in_what_is_below_it(outer: str, inner: str) -> None:
    assert len(problems(writer("a", [outer]), writer("b", [inner]))) == 1
    assert problems(writer("a", [outer]), writer("b", [inner], "a")) == []


def test_siblings_under_one_folder_do_not_conflict_with_each_other() -> None:
    assert problems(writer("f", ["src/"]), writer("a", ["src/a.py"], "f"), writer("b", ["src/b.py"], "f")) == []
    assert problems(writer("a", ["src/a.py"]), writer("b", ["src/ab.py"]), writer("c", ["srcx/a.py"])) == []


def test_case_and_unicode_count_where_the_filesystem_folds_them() -> None:
    nfc, nfd = unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")
    assert problems(writer("a", ["README.md"]), writer("b", ["readme.md"])) == []
    assert len(problems(writer("a", ["README.md"]), writer("b", ["readme.md"]), names=Names(True, False))) == 1
    assert len(problems(writer("a", ["Docs/"]), writer("b", ["docs/x.md"]), names=Names(True, False))) == 1
    assert problems(writer("a", [nfc]), writer("b", [nfd])) == []
    assert len(problems(writer("a", [nfc]), writer("b", [nfd]), names=Names(False, True))) == 1


def test_ten_thousand_writers_in_a_chain_or_apart_are_checked() -> None:
    chain = [writer(f"t{i}", ["a.txt"], *([f"t{i - 1}"] if i else [])) for i in range(10_000)]
    assert problems(*chain) == []
    apart = [writer(f"t{i}", [f"d{i % 100}/f{i}.txt"]) for i in range(10_000)]
    assert problems(*apart) == []
    broken = [*chain[:5_000], writer("t5000", ["a.txt"]), *chain[5_001:]]
    assert [p.split(" both")[0] for p in problems(*broken)] == ['tasks "t4999" and "t5000"']


# ---- plans from before contracts: writers that may write anywhere ---------------------------------------------


def legacy(task_id: str, *deps: str) -> Task:
    return Task(id=task_id, description="w", type=TaskType.FILE_WRITE, files=None, dependencies=list(deps))


def related(plan: Plan) -> dict[str, int]:
    """For each task, a bit set (bit i: the plan's i-th task) of the tasks it depends on or that depend on
    it, directly or not."""
    graph = plan.graph()
    bit = {task_id: 1 << index for index, task_id in enumerate(graph)}
    order = dag.topological_order(graph)
    below = dict.fromkeys(graph, 0)
    for task_id in order:
        for dep in graph[task_id]:
            if dep in graph:
                below[task_id] |= below[dep] | bit[dep]
    above = dict.fromkeys(graph, 0)
    for task_id in reversed(order):
        for dep in graph[task_id]:
            if dep in graph:
                above[dep] |= above[task_id] | bit[task_id]
    return {task_id: below[task_id] | above[task_id] | bit[task_id] for task_id in graph}


def accepted(*tasks: Task) -> Plan:
    """The plan after `accept_legacy`: it must still be a DAG and order every unbounded writer with every
    other writer."""
    plan = Plan(goal="g", tasks=list(tasks))
    notices = Contract(Path("."), lambda name: None).accept_legacy(plan)
    assert dag.find_cycle(plan.graph()) is None
    index = {task.id: i for i, task in enumerate(plan.tasks)}
    unbounded = sum(1 << index[t.id] for t in plan.tasks if t.type is TaskType.FILE_WRITE and t.files is None)
    links = related(plan)
    for task in plan.tasks:
        if task.files is not None or unbounded >> index[task.id] & 1:
            assert links[task.id] & unbounded == unbounded, task.id
    assert bool(notices) == bool(unbounded)
    return plan


def test_an_unbounded_writer_is_ordered_with_every_writer_and_readers_stay_free() -> None:
    plan = accepted(legacy("u"), writer("a", ["a.py"]), Task(id="r", description="read"), writer("b", ["b/"]))
    # free writers go before it; the reader runs when it likes
    assert [t.dependencies for t in plan.tasks] == [["a", "b"], [], [], []]


def test_unbounded_writers_between_other_writers_get_no_cycle() -> None:
    # a → u1 → b already; u2 is free; c depends on u2: whatever is added, no cycle and all are ordered
    accepted(
        writer("a", ["x"]),
        legacy("u1", "a"),
        writer("b", ["y"], "u1"),
        legacy("u2"),
        writer("c", ["z"], "u2"),
        legacy("u3", "c"),
        writer("d", ["w"]),
        writer("e", ["v"], "u3"),
    )


def test_attacker_shapes_of_legacy_plans_stay_acyclic() -> None:
    # dependencies on tasks that are not there, a writer that every unbounded task already depends on,
    # unbounded tasks in reverse plan order, a plan that is one long chain of them
    accepted(legacy("u2", "u1"), legacy("u1", "ghost"), writer("w", ["a"]), legacy("u3", "w"))
    accepted(writer("w", ["a"]), legacy("u1", "w"), legacy("u2", "w"), legacy("u0"))
    accepted(*[legacy(f"u{i}", *([f"u{i - 1}"] if i else [])) for i in range(50)], writer("w", ["a"], "u25"))


def test_two_thousand_unbounded_writers_and_writers_are_ordered() -> None:
    """What was pairwise (each unbounded writer against every writer, each pair a search of the graph) is
    one pass over the graph: 2,000 tasks take no time worth measuring (bench dag times it)."""
    tasks = [legacy(f"u{i}") if i % 2 else writer(f"w{i}", [f"f{i}.txt"]) for i in range(2_000)]
    plan = accepted(*tasks)
    assert sum(len(t.dependencies) for t in plan.tasks) < 2 * len(tasks)  # a chain, not a clique
