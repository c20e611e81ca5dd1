"""Writers of one path must form a chain in the DAG (paicli/plan/write_sets.py), checked without comparing
every pair: spellings, folders, case and Unicode as the filesystem compares them, long chains."""

from __future__ import annotations

import unicodedata

import pytest

from paicli.common.paths import Names
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
