"""Reading a suite file: a valid one loads with its folder as root; every problem is one line naming the
task, and all of them are reported at once; no task path may leave the suite's folder or show the agent
the suite file or a hidden check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.eval.suite_file import SuiteError, load_suite


def suite_folder(root: Path, body: str) -> Path:
    for folder in ("t/start", "t/hidden", "u/start", "u/hidden"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text(body)
    return root / "suite.toml"


TASK = '[[tasks]]\nid = "t"\ngoal = "do it"\nstart = "t/start"\nhidden = "t/hidden"\n'


def problems(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return [problem.removeprefix(f"{path}: ") for problem in caught.value.problems]


def test_a_valid_suite_loads_with_its_folder_as_root_and_its_defaults(tmp_path: Path) -> None:
    path = suite_folder(tmp_path, 'name = "s"\n[defaults]\ntime_limit = 5\n' + TASK)
    suite = load_suite(path)
    assert suite.root == Path(os.path.realpath(tmp_path))
    assert [task.id for task in suite.tasks] == ["t"]
    assert suite.time_limit_of(suite.tasks[0]) == 5 and suite.check_of(suite.tasks[0]) == "python -m pytest -q"


def test_the_file_cannot_set_its_own_root(tmp_path: Path) -> None:
    path = suite_folder(tmp_path, 'name = "s"\nroot = "/"\n' + TASK)
    assert load_suite(path).root == Path(os.path.realpath(tmp_path))


def test_every_shape_problem_is_one_line_naming_the_task(tmp_path: Path) -> None:
    body = (
        'name = "s"\n'
        + TASK
        + '[[tasks]]\nid = "u"\ngoal = ""\nhidden = "u/hidden"\nstart = "u/start"\ntime_limit = -1\n'
    )
    found = problems(suite_folder(tmp_path, body))
    assert len(found) == 2 and all("\n" not in problem for problem in found)
    assert found[0].startswith("tasks[1] (id 'u').goal:") and found[1].startswith("tasks[1] (id 'u').time_limit:")


def test_paths_that_leave_the_suite_folder_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (tmp_path / "outside").mkdir()
    (root / "t").mkdir(parents=True)
    (root / "t" / "link").symlink_to(tmp_path / "outside")
    body = 'name = "s"\n'
    for number, (start, hidden) in enumerate(
        [("../outside", "t"), (str(tmp_path / "outside"), "t"), ("t/link", "t"), ("t", "."), ("t", "missing")]
    ):
        body += f'[[tasks]]\nid = "x{number}"\ngoal = "g"\nstart = "{start}"\nhidden = "{hidden}"\n'
    (root / "suite.toml").write_text(body)
    found = problems(root / "suite.toml")
    assert any(p.startswith("task x0: start = '../outside': must be a folder inside") for p in found)
    assert any(p.startswith("task x1: start = ") and "relative to the suite file" in p for p in found)
    assert any(p.startswith("task x2: start = 't/link': must be a folder inside") for p in found)
    assert any(p.startswith("task x3: hidden = '.'") for p in found)
    assert any(p == "task x4: hidden = 'missing': no such folder" for p in found)


def test_a_starting_folder_may_not_hold_the_suite_file_or_a_hidden_check(tmp_path: Path) -> None:
    (tmp_path / "all" / "hidden").mkdir(parents=True)
    (tmp_path / "all" / "suite.toml").write_text(
        'name = "s"\n[[tasks]]\nid = "a"\ngoal = "g"\nstart = "."\nhidden = "hidden"\n'
    )
    found = problems(tmp_path / "all" / "suite.toml")
    assert any("must be a folder inside the suite file's folder (not it" in p for p in found)
    path = suite_folder(tmp_path / "b", 'name = "s"\n' + TASK.replace('start = "t/start"', 'start = "t"'))
    assert problems(path) == ["task t: start = 't' overlaps the hidden check of task t"]


def test_bad_toml_and_a_git_option_as_commit_are_refused(tmp_path: Path) -> None:
    assert problems(suite_folder(tmp_path, "name = "))[0].startswith("not valid TOML")
    (tmp_path / "r").mkdir()
    body = (
        'name = "s"\n[[tasks]]\nid = "g"\ngoal = "x"\nrepo = "r"\ncommit = "--upload-pack=evil"\nhidden = "t/hidden"\n'
    )
    assert problems(suite_folder(tmp_path, body)) == [
        "task g: commit = '--upload-pack=evil' is not a commit name (hex, a tag or a branch)"
    ]


def test_a_goal_that_chat_mode_would_misread_or_argv_cannot_carry_is_refused(tmp_path: Path) -> None:
    body = 'name = "s"\n' + TASK.replace('goal = "do it"', 'goal = "/init"')
    body += TASK.replace('id = "t"', 'id = "u"').replace("t/", "u/").replace('goal = "do it"', 'goal = "a\\u0000b"')
    assert problems(suite_folder(tmp_path, body)) == [
        "task t: a goal may not start with / (chat mode would take it for a custom command)",
        "task u: goal holds a NUL character",
    ]
