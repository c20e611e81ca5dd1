"""`paicli eval from-commits` on a generated repository: which commits become tasks, and that a task's
start is a fresh one-commit repository with the parent's files (the commit's test changes absent, none of
the original's history or objects), its hidden folder the commit's test files, its goal the message."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from paicli.eval.from_commits import is_doc_path, is_test_path, run_from_commits
from paicli.eval.records import Suite

CALC_V1 = "def add(a, b):\n    return a + b\n"
CALC_V2 = CALC_V1 + "\n\ndef sub(a, b):\n    return a - b\n"
TEST_V1 = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# a test the last commit deletes: it fails once div() exists
TEST_OLD = "import calc\n\n\ndef test_no_div():\n    assert not hasattr(calc, 'div')\n"
TEST_V2 = TEST_V1 + "\n\ndef test_sub():\n    from calc import sub\n\n    assert sub(5, 3) == 2\n"


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "--initial-branch=main")

    def git(self, *args: str) -> str:
        env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
        for who in ("AUTHOR", "COMMITTER"):
            env |= {f"GIT_{who}_NAME": "dev", f"GIT_{who}_EMAIL": "dev@example.com"}
            env[f"GIT_{who}_DATE"] = f"2026-01-01T00:{self.tick:02d}:00+0000"
        done = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        self.tick += 1
        for name, text in files.items():
            path = self.path / name
            if text is None:
                self.git("rm", "-q", "--", name)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self.git("add", "--", name)
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Repo, dict[str, str]]:
    r = Repo(tmp_path / "origin")
    ids = {
        "root": r.commit("first", {"calc.py": CALC_V1, "tests/test_calc.py": TEST_V1, "tests/test_old.py": TEST_OLD}),
        "sub": r.commit("Add sub()\n\nSubtraction, with a test.", {"calc.py": CALC_V2, "tests/test_calc.py": TEST_V2}),
        "code": r.commit("Only code", {"calc.py": CALC_V2 + "# tidy\n"}),
        "tests": r.commit("Only tests", {"tests/test_calc.py": TEST_V2 + "# more\n"}),
    }
    r.git("checkout", "-q", "-b", "side")
    ids["side"] = r.commit("Side: mul", {"ops.py": "def mul(a, b):\n    return a * b\n", "test_ops.py": "# t\n"})
    r.git("checkout", "-q", "main")
    r.tick += 1
    r.git("merge", "-q", "--no-ff", "-m", "Merge side", "side")
    ids["merge"] = r.git("rev-parse", "HEAD")
    div_test = "from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"
    ids["last"] = r.commit(
        "Div, and the old test goes",
        {
            "calc.py": CALC_V2 + "\n\ndef div(a, b):\n    return a / b\n",
            "tests/test_div.py": div_test,
            "tests/test_old.py": None,
        },
    )
    return r, ids


def suite_of(out: Path) -> Suite:
    return Suite.model_validate({**tomllib.loads((out / "suite.toml").read_text(encoding="utf-8")), "root": out})


def test_commits_changing_tests_and_code_become_tasks_newest_first(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path
) -> None:
    r, ids = repo
    out = tmp_path / "suite"
    assert run_from_commits(r.path, None, 10, "python -m pytest -q", out, stdout=io.StringIO()) == 0
    suite = suite_of(out)
    assert [t.id for t in suite.tasks] == [f"commit-{ids[k][:12]}" for k in ("last", "side", "sub")]
    assert suite.tasks[2].goal == "Add sub()\n\nSubtraction, with a test."
    # the last commit deletes tests/test_old.py: its check removes it first; the others run the command
    assert suite.check_of(suite.tasks[0]) == "rm -f -- tests/test_old.py && python -m pytest -q"
    assert suite.check_of(suite.tasks[1]) == suite.check_of(suite.tasks[2]) == "python -m pytest -q"
    assert all(task.setup is None for task in suite.tasks)
    assert run_from_commits(r.path, None, 2, "pytest", tmp_path / "two", stdout=io.StringIO()) == 0
    assert len(suite_of(tmp_path / "two").tasks) == 2
    assert run_from_commits(r.path, ids["sub"], 10, "pytest", tmp_path / "since", stdout=io.StringIO()) == 0
    assert [t.id for t in suite_of(tmp_path / "since").tasks] == [f"commit-{ids[k][:12]}" for k in ("last", "side")]


def test_the_start_is_the_parent_without_history_and_the_hidden_folder_the_commits_tests(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r, ids = repo
    # a variable that would lend a new repository the original's objects is not passed on
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", str(r.path / ".git" / "objects"))
    out = tmp_path / "suite"
    assert run_from_commits(r.path, None, 1, "python -m pytest -q", out, stdout=io.StringIO()) == 0
    monkeypatch.delenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")
    (task,) = suite_of(out).tasks
    start, hidden = out / task.start, out / task.hidden  # type: ignore[operator]
    start_repo = Repo.__new__(Repo)
    start_repo.path, start_repo.tick = start, 0
    assert start_repo.git("rev-list", "--all").splitlines() == [start_repo.git("rev-parse", "HEAD")]
    assert start_repo.git("status", "--porcelain") == ""
    assert start_repo.git("for-each-ref", "--format=%(refname)") == "refs/heads/main"
    objects = start_repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    assert sum(line.endswith(" commit") for line in objects.splitlines()) == 1
    assert not (start / ".git" / "objects" / "info" / "alternates").exists()
    everything = b"".join(p.read_bytes() for p in (start / ".git").rglob("*") if p.is_file())
    for commit in ids.values():
        assert commit.encode() not in everything and commit not in objects
    # the parent's files: the old test still there, the new test and the solution not
    assert (start / "tests" / "test_old.py").exists() and not (start / "tests" / "test_div.py").exists()
    assert "def div" not in (start / "calc.py").read_text(encoding="utf-8")
    assert sorted(p.relative_to(hidden).as_posix() for p in hidden.rglob("*") if p.is_file()) == ["tests/test_div.py"]
    assert "test_div" in (hidden / "tests" / "test_div.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("only", ["", " {tests}"])  # the whole test suite, or the commit's test files
def test_the_check_fails_on_the_start_and_passes_with_the_commits_code(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path, only: str
) -> None:
    r, ids = repo
    out = tmp_path / "suite"
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider" + only
    assert run_from_commits(r.path, ids["code"], 1, command, out, stdout=io.StringIO()) == 0
    (task,) = suite_of(out).tasks
    results = []
    for solved in (False, True):
        work = tmp_path / f"work-{solved}"
        shutil.copytree(out / task.start, work)  # type: ignore[operator]
        if solved:
            (work / "calc.py").write_text(r.git("show", f"{ids['last']}:calc.py") + "\n", encoding="utf-8")
        shutil.copytree(out / task.hidden, work, dirs_exist_ok=True)
        quick = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        check = subprocess.run(
            ["bash", "-c", suite_of(out).check_of(task)],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            env=quick,
        )
        results.append(check.returncode)
    # with the commit's code the deleted test_old.py would fail: the check removed it, as the commit did
    assert results[0] != 0 and results[1] == 0
    assert not (tmp_path / "work-True" / "tests" / "test_old.py").exists()
    assert (out / task.start / "tests" / "test_old.py").exists()  # type: ignore[operator]


def test_tests_in_the_command_become_each_tasks_own_test_files(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path
) -> None:
    r, ids = repo
    odd = r.commit(
        "Odd names",
        {"calc.py": "x = 1\n", "-x_test.py": "1\n", "tests/test_it's.py": "1\n", "tests/conftest.py": "\n"},
    )
    fixtures = r.commit("Fixtures only", {"calc.py": "x = 2\n", "tests/data/in.json": "{}\n"})
    out = tmp_path / "suite"
    assert run_from_commits(r.path, ids["merge"], 5, "pytest -q {tests}", out, stdout=io.StringIO()) == 0
    suite = suite_of(out)
    checks = {task.id: suite.check_of(task) for task in suite.tasks}
    assert (
        checks
        == {
            f"commit-{fixtures[:12]}": "pytest -q tests/data",  # no file named like a test: its folder
            f"commit-{odd[:12]}": "pytest -q ./-x_test.py 'tests/test_it'\"'\"'s.py'",  # never an option
            f"commit-{ids['last'][:12]}": "rm -f -- tests/test_old.py && pytest -q tests/test_div.py",
        }
    )
    assert suite.defaults.check == "pytest -q ."  # a task added by hand runs them all


def test_commits_whose_other_changes_are_documentation_are_passed_over_and_setup_is_written(tmp_path: Path) -> None:
    r = Repo(tmp_path / "origin")
    r.commit("one", {"a.py": "1\n", "tests/test_a.py": "1\n", "CHANGES": "", "docs/conf.py": ""})
    code = r.commit("Code, tests and notes", {"a.py": "2\n", "tests/test_a.py": "2\n", "CHANGES.md": "- two\n"})
    r.commit("Tests and notes", {"tests/test_a.py": "3\n", "CHANGES.md": "- three\n", "docs/index.rst": "x\n"})
    r.commit("Tests, changelog, CI", {"tests/test_a.py": "4\n", "CHANGES": "4\n", ".github/ci.yml": "on: push\n"})
    r.commit("Tests and the docs' config", {"tests/test_a.py": "5\n", "docs/conf.py": "x = 5\n"})
    out = tmp_path / "out"
    setup = "python -m venv .venv && .venv/bin/pip install -e ."
    assert run_from_commits(r.path, None, 5, "pytest", out, setup=setup, stdout=io.StringIO()) == 0
    (task,) = suite_of(out).tasks
    assert task.id == f"commit-{code[:12]}" and task.setup == setup
    errors = io.StringIO()
    assert run_from_commits(r.path, None, 5, "pytest", tmp_path / "o2", setup=" ", stderr=errors) == 2
    assert "--setup is empty" in errors.getvalue() and not (tmp_path / "o2").exists()


@pytest.mark.parametrize(
    ("path", "is_doc"),
    [
        ("CHANGES.md", True),
        ("CHANGES", True),
        ("docs/conf.py", True),
        ("changelog.d/123.bugfix", True),
        (".github/workflows/tests.yaml", True),
        ("requirements/tests.txt", True),
        ("src/pkg/changes.py", False),
        ("src/pkg/news.py", False),
        ("pyproject.toml", False),
        ("src/pkg/data.json", False),
    ],
)
def test_what_counts_as_documentation(path: str, is_doc: bool) -> None:
    assert is_doc_path(path) is is_doc


def test_bad_input_is_one_line_and_writes_nothing(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    r, _ = repo
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine", encoding="utf-8")
    cases = [
        (r.path, "no-such-ref", 5, "pytest", tmp_path / "a"),
        (r.path, "--output=/tmp/x", 5, "pytest", tmp_path / "b"),
        (tmp_path, None, 5, "pytest", tmp_path / "c"),
        (r.path, None, 0, "pytest", tmp_path / "d"),
        (r.path, None, 5, "  ", tmp_path / "e"),
        (r.path, None, 5, "pytest", full),
    ]
    for repo_path, since, n, command, out in cases:
        errors = io.StringIO()
        assert run_from_commits(repo_path, since, n, command, out, stderr=errors, stdout=io.StringIO()) == 2
        assert errors.getvalue().count("\n") == 1, errors.getvalue()
        assert not out.exists() or out == full
    assert [p.name for p in full.iterdir()] == ["keep.txt"]


def test_a_history_without_such_commits_is_said_so(tmp_path: Path) -> None:
    r = Repo(tmp_path / "origin")
    r.commit("one", {"a.py": "1\n", "tests/test_a.py": "1\n"})
    r.commit("code only", {"a.py": "2\n"})
    errors = io.StringIO()
    assert run_from_commits(r.path, None, 5, "pytest", tmp_path / "out", stderr=errors, stdout=io.StringIO()) == 1
    assert "no commit changes both test files and other files" in errors.getvalue()


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_x.py", True),
        ("pkg/test_x.py", True),
        ("pkg/x_test.go", True),
        ("web/src/app.test.tsx", True),
        ("spec/models/user_spec.rb", True),
        ("src/conftest.py", True),
        ("src/testing_utils.py", False),
        ("src/contest.py", False),
        ("latest.py", False),
        ("docs/tests.md", False),
    ],
)
def test_what_counts_as_a_test_file(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_a_hostile_commit_message_is_the_goal_as_written(tmp_path: Path) -> None:
    r = Repo(tmp_path / "origin")
    r.commit("one", {"a.py": "1\n", "tests/test_a.py": "1\n"})
    message = 'Fix \'\'\' and """ quoting\\n \\\\ [tasks]\n\nid = "x"\x7f \x1b]52;c;AAAA\x07 ünï €'
    r.commit(message, {"a.py": "2\n", "tests/test_a.py": "2\n"})
    shown = io.StringIO()
    assert run_from_commits(r.path, None, 5, 'pytest -k "not slow"', tmp_path / "out", stdout=shown) == 0
    (task,) = suite_of(tmp_path / "out").tasks
    assert task.goal == message and "\x1b" not in shown.getvalue()
    assert suite_of(tmp_path / "out").defaults.check == 'pytest -k "not slow"'
