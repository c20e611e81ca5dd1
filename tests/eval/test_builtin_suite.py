"""The built-in suite: it loads as a `Suite`, its tasks are self-contained (the standard library and pytest
only), every hidden check FAILS on the starting state and PASSES once the reference solution in
tests/eval/solutions/ (never in the package) is applied, the existing tests of multi-file tasks pass from
the start, and the wheel carries the suite. All checks run in one Python process (check_driver.py)."""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from paicli.eval.builtin import builtin_suite, builtin_suites
from paicli.eval.records import Suite

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = Path(__file__).resolve().parent / "solutions"
DRIVER = Path(__file__).resolve().parent / "check_driver.py"


def load() -> Suite:
    path = builtin_suite("python-basics")
    assert path is not None and path == REPO / "paicli" / "eval" / "suites" / "python-basics" / "suite.toml"
    return Suite.model_validate({**tomllib.loads(path.read_text(encoding="utf-8")), "root": path.parent})


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_the_suite_loads_and_every_task_has_its_folders() -> None:
    suite = load()
    assert list(builtin_suites()) == ["python-basics"]
    assert 20 <= len(suite.tasks) <= 40
    for task in suite.tasks:
        assert task.start is not None and task.repo is None and task.setup is None
        for folder in (suite.root / task.start, suite.root / task.hidden):
            assert folder.resolve().is_relative_to(suite.root.resolve()) and files_under(folder), folder
        check = shlex.split(suite.check_of(task))
        assert check[:3] == ["python", "-m", "pytest"], task.id
        assert "training" in suite.description  # the docs' caveat, in the suite itself too


def test_several_tasks_span_a_package_whose_existing_tests_must_keep_passing() -> None:
    suite = load()
    multi = [task for task in suite.tasks if "multi-file" in task.tags]
    assert len(multi) >= 6
    for task in multi:
        start = suite.root / str(task.start)
        modules = [p for p in files_under(start) if p.suffix == ".py" and p.parts[-2] != "tests"]
        assert len([p for p in modules if p.name != "__init__.py"]) >= 3, task.id
        assert (start / "tests").is_dir() and " tests " in f" {suite.check_of(task)} ", task.id
        changed = [p.relative_to(SOLUTIONS / task.id) for p in files_under(SOLUTIONS / task.id)]
        assert len(changed) >= 1 and all(p.parts[0] != "tests" for p in changed), task.id


def test_tasks_need_only_the_standard_library_and_pytest() -> None:
    suite = load()
    for task in suite.tasks:
        folders = [suite.root / str(task.start), suite.root / task.hidden, SOLUTIONS / task.id]
        sources = [p for folder in folders for p in files_under(folder) if p.suffix == ".py"]
        own = {p.relative_to(f).parts[0].removesuffix(".py") for f in folders for p in files_under(f)}
        for source in sources:
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    assert top in sys.stdlib_module_names or top == "pytest" or top in own, f"{source}: {name}"


def test_reference_solutions_stay_out_of_the_package() -> None:
    suite = load()
    assert sorted(p.name for p in SOLUTIONS.iterdir()) == sorted(task.id for task in suite.tasks)
    packaged = "\n".join(p.read_text(encoding="utf-8") for p in files_under(REPO / "paicli" / "eval" / "suites"))
    for solution in files_under(SOLUTIONS):
        assert solution.read_text(encoding="utf-8") not in packaged, solution


def workspace(tmp: Path, name: str, *layers: Path) -> Path:
    folder = tmp / name
    for layer in layers:
        shutil.copytree(layer, folder, dirs_exist_ok=True)
    return folder


def test_every_hidden_check_fails_at_the_start_and_passes_with_the_solution(tmp_path: Path) -> None:
    suite = load()
    jobs: list[tuple[str, list[str]]] = []
    expected: list[tuple[str, str, bool]] = []
    for task in suite.tasks:
        start, hidden, args = (
            suite.root / str(task.start),
            suite.root / task.hidden,
            shlex.split(suite.check_of(task))[3:],
        )
        jobs.append((str(workspace(tmp_path, f"{task.id}-start", start, hidden)), args))
        expected.append((task.id, "start + hidden", False))
        jobs.append((str(workspace(tmp_path, f"{task.id}-solved", start, SOLUTIONS / task.id, hidden)), args))
        expected.append((task.id, "start + solution + hidden", True))
        if (start / "tests").is_dir():
            jobs.append((str(workspace(tmp_path, f"{task.id}-existing", start)), ["-q", "tests"]))
            expected.append((task.id, "the existing tests at the start", True))
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    halves = [jobs[0::2], jobs[1::2]]  # two processes for two cores
    drivers = [
        subprocess.Popen(
            [sys.executable, str(DRIVER), json.dumps(half)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        for half in halves
    ]
    outputs = [driver.communicate(timeout=600) for driver in drivers]
    assert all(driver.returncode == 0 for driver in drivers), [err[-3000:] for _, err in outputs]
    first, second = (json.loads(out) for out, _ in outputs)
    codes = [code for pair in zip(first, [*second, None], strict=False) for code in pair if code is not None]
    wrong = [
        f"{tid}: {what} exited {code}"
        for (tid, what, ok), code in zip(expected, codes, strict=True)
        if (code == 0) != ok
    ]
    assert wrong == []


@pytest.mark.parametrize("name", ["suite.toml", "tasks/markdown-toc/hidden/tests_hidden/test_toc_features.py"])
def test_the_wheel_carries_the_suite(name: str) -> None:
    from hatchling.builders.wheel import WheelBuilder

    shipped = {f.distribution_path for f in WheelBuilder(str(REPO)).recurse_included_files()}
    assert f"paicli/eval/suites/python-basics/{name}" in shipped
    assert not [path for path in shipped if "solutions" in path]
