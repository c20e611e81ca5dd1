"""Planner replies with the plan contract's fields (`files`, `action`), right and wrong, each labelled with
what the planner must do with it: accept it (with exactly these files and actions) or re-ask with the
exact problem.

These cases carry `contract=True`: the reply is parsed and then checked against the plan contract in the
workspace `contract_workspace` builds, the two steps `Planner` takes before it accepts a plan
(`planner_accepts` does the same). Replies of tests/plan/corpus.py are labelled for parsing alone.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from paicli.common.errors import PlanError
from paicli.plan.contract import Contract
from paicli.plan.model import Plan
from paicli.plan.parse_reply import joined, parse_plan_reply
from paicli.tools.toolbox import builtin_tool
from tests.plan.corpus import CASES, Accept, Case, Reject, plan_json, task


def contract_workspace(root: Path) -> Path:
    """root/ws with app.py, src/util.py, tests/, alias.py → app.py, vendor → root/outside, and .git/."""
    workspace, outside = root / "ws", root / "outside"
    for folder in (workspace / "src", workspace / "tests", workspace / ".git", outside):
        folder.mkdir(parents=True, exist_ok=True)
    (workspace / "app.py").write_text("print('app')\n")
    (workspace / "src" / "util.py").write_text("def helper(): ...\n")
    for link, target in (("alias.py", Path("app.py")), ("vendor", outside)):
        if not (workspace / link).is_symlink():
            (workspace / link).symlink_to(target)
    return workspace


def planner_accepts(
    reply: str,
    *,
    finish_reason: str | None = "stop",
    workspace: Path | None = None,
    max_tasks: int = 50,
    external_ids: Collection[str] = (),
) -> Plan:
    """The plan the planner accepts from this reply, or the PlanError it re-asks with: parsed, then (with a
    workspace) checked against the plan contract, as `Planner` does."""
    plan = parse_plan_reply(
        reply, finish_reason=finish_reason, goal="the goal", max_tasks=max_tasks, external_ids=external_ids
    )
    if workspace is not None and (problems := Contract(workspace, builtin_tool).problems(plan)):
        raise PlanError(joined(problems))
    return plan


def _case(name: str, reply: str, expect: Accept | Reject) -> Case:
    return Case(f"contract: {name}", reply, expect, contract=True)


def read(id: str, path: str, deps: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    action = {"tool": "read_file", "args": {"path": path}}
    return task(id, f"Read {path}", "FILE_READ", deps, action=action, **extra)


def write(id: str, files: Any, deps: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return task(id, "Change the code", "FILE_WRITE", deps, files=files, **extra)


def check(id: str, command: str, deps: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    action = {"tool": "execute_command", "args": {"command": command}}
    return task(id, f"Run {command}", "VERIFICATION", deps, action=action, **extra)


def _reject(name: str, *tasks: dict[str, Any], problem: str) -> Case:
    return _case(name, plan_json(*tasks), Reject(problem))


READ_WRITE_CHECK = plan_json(
    read("task_1", "src/app.py"),
    write("task_2", ["src/app.py", "tests/"], ["task_1"]),
    check("task_3", "pytest -q", ["task_2"]),
    summary="add a verbose flag",
)
READ_WRITE_CHECK_EXPECTED = Accept(
    [("task_1", "FILE_READ", []), ("task_2", "FILE_WRITE", ["task_1"]), ("task_3", "VERIFICATION", ["task_2"])],
    summary="add a verbose flag",
    files={"task_2": ["src/app.py", "tests/"]},
    actions={"task_1": ("read_file", {"path": "src/app.py"}), "task_3": ("execute_command", {"command": "pytest -q"})},
)
MANY_FILES = [f"src/module_{n}.py" for n in range(201)]
MAKE = {"command": "make dist"}

CONTRACT_CASES: list[Case] = [
    # ---- accepted --------------------------------------------------------------------------------------
    _case("read, write, check", READ_WRITE_CHECK, READ_WRITE_CHECK_EXPECTED),
    _case(
        "read, write, check in a fence with prose",
        f"Here is the plan; the reads and the check need no model.\n```json\n{READ_WRITE_CHECK}\n```",
        READ_WRITE_CHECK_EXPECTED,
    ),
    _case(
        "writes alias with one path as a string",
        plan_json(task("a", "Fix the bug", "FILE_WRITE", writes="./app.py")),
        Accept([("a", "FILE_WRITE", [])], files={"a": ["app.py"]}),
    ),
    _case(
        "paths alias with a folder",
        plan_json(task("a", "Add tests", "file_write", paths=["tests/", "README.md"])),
        Accept([("a", "FILE_WRITE", [])], files={"a": ["tests/", "README.md"]}),
    ),
    _case(
        "paths spelled differently are one path",
        plan_json(write("a", ["./app.py", "app.py", "src//util.py", "src/./util.py"])),
        Accept([("a", "FILE_WRITE", [])], files={"a": ["app.py", "src/util.py"]}),
    ),
    _case(
        "a new file in a new folder",
        plan_json(write("a", ["docs/guide/intro.md"])),
        Accept([("a", "FILE_WRITE", [])], files={"a": ["docs/guide/intro.md"]}),
    ),
    _case(
        "the whole workspace as dot",
        plan_json(write("a", ["."])),
        Accept([("a", "FILE_WRITE", [])], files={"a": ["./"]}),
    ),
    _case(
        "tool_call alias with name and arguments",
        plan_json(task("a", "List src", "FILE_READ", tool_call={"name": "list_dir", "arguments": {"path": "src"}})),
        Accept([("a", "FILE_READ", [])], actions={"a": ("list_dir", {"path": "src"})}),
    ),
    _case(
        "arguments as a JSON string",
        plan_json(task("a", "Test", "COMMAND", action={"tool": "execute_command", "args": '{"command": "make"}'})),
        Accept([("a", "COMMAND", [])], actions={"a": ("execute_command", {"command": "make"})}),
    ),
    _case(
        "parameters key and a grep",
        plan_json(task("a", "Find TODOs", "FILE_READ", action={"name": "grep_code", "parameters": {"pattern": "x"}})),
        Accept([("a", "FILE_READ", [])], actions={"a": ("grep_code", {"pattern": "x"})}),
    ),
    _case(
        "an action without arguments",
        plan_json(task("a", "List the workspace", "FILE_READ", action={"tool": "list_dir"})),
        Accept([("a", "FILE_READ", [])], actions={"a": ("list_dir", {})}),
    ),
    _case(
        "null files and action",
        plan_json(task("a", "Think", "ANALYSIS", files=None, action=None)),
        Accept([("a", "ANALYSIS", [])], files={}, actions={}),
    ),
    _case(
        "a command declaring what it writes",
        plan_json(task("a", "Build", "COMMAND", files=["dist/"], action={"tool": "execute_command", "args": MAKE})),
        Accept([("a", "COMMAND", [])], files={"a": ["dist/"]}, actions={"a": ("execute_command", MAKE)}),
    ),
    _case(
        "parallel writers of different files",
        plan_json(write("a", ["src/util.py"]), write("b", ["app.py"]), write("c", ["src/other/"])),
        Accept([("a", "FILE_WRITE", []), ("b", "FILE_WRITE", []), ("c", "FILE_WRITE", [])]),
    ),
    _case(
        "a folder and a sibling with a longer name",
        plan_json(write("a", ["src/"]), write("b", ["srcx/app.py"])),
        Accept([("a", "FILE_WRITE", []), ("b", "FILE_WRITE", [])], files={"a": ["src/"], "b": ["srcx/app.py"]}),
    ),
    _case(
        "writers of one file ordered through another task",
        plan_json(write("a", ["app.py"]), task("b", "Review", "ANALYSIS", ["a"]), write("c", ["app.py"], ["b"])),
        Accept([("a", "FILE_WRITE", []), ("b", "ANALYSIS", ["a"]), ("c", "FILE_WRITE", ["b"])]),
    ),
    _case(
        "a writer and a check of the same file ordered",
        plan_json(write("a", ["app.py"]), check("b", "python app.py", ["a"], files=["app.py"])),
        Accept([("a", "FILE_WRITE", []), ("b", "VERIFICATION", ["a"])], files={"a": ["app.py"], "b": ["app.py"]}),
    ),
    # ---- rejected: files ------------------------------------------------------------------------------
    _reject(
        "FILE_WRITE without files",
        task("a", "Fix", "FILE_WRITE"),
        problem='task "a" is FILE_WRITE and must list the paths it may change in "files"',
    ),
    _reject(
        "FILE_WRITE with an empty files list",
        write("a", []),
        problem='task "a" is FILE_WRITE and must list the paths it may change in "files"',
    ),
    _reject(
        "files on an ANALYSIS task",
        task("a", "Think", "ANALYSIS", files=["app.py"]),
        problem='task "a" is ANALYSIS, which changes nothing: drop its "files" (the paths a task may change)',
    ),
    _reject(
        "files on a read with an action",
        read("a", "app.py", files=["app.py"]),
        problem='task "a" is FILE_READ, which changes nothing: drop its "files" (the paths a task may change)',
    ),
    _reject(
        "files that are not paths", write("a", [1, 2]), problem='task "a" has "files" that are not a list of paths'
    ),
    _reject(
        "files as an object",
        write("a", {"path": "app.py"}),
        problem='task "a" has "files" that are not a list of paths',
    ),
    _reject("an empty path", write("a", ["app.py", " "]), problem='task "a" has an empty path in "files"'),
    _reject(
        "a glob",
        write("a", ["src/*.py"]),
        problem='task "a" has the pattern \'src/*.py\' in "files"; name paths or folders, no globs',
    ),
    _reject(
        "too many files",
        write("a", MANY_FILES),
        problem='task "a" declares 201 files, more than 200; name folders ("src/")',
    ),
    _reject(
        "a path above the workspace",
        write("a", ["src/../../secrets.txt"]),
        problem="task \"a\" declares '../secrets.txt', which is outside the workspace; use relative paths",
    ),
    _reject(
        "an absolute path",
        write("a", ["/etc/hosts"]),
        problem="task \"a\" declares '/etc/hosts', which is outside the workspace; use relative paths",
    ),
    _reject(
        "a home path",
        write("a", ["~/.bashrc"]),
        problem="task \"a\" declares ~/.bashrc: ~/.bashrc starts with '~'; home folders are not expanded",
    ),
    _reject(
        "a symlink out of the workspace",
        write("a", ["vendor/lib.py"]),
        problem='task "a" declares vendor/lib.py: vendor/lib.py is outside the workspace',
    ),
    _reject(
        "a symlinked folder out of the workspace",
        write("a", ["vendor/"]),
        problem='task "a" declares vendor/: vendor is outside the workspace',
    ),
    _reject(
        "a symlink inside the workspace",
        write("a", ["alias.py"]),
        problem='task "a" declares alias.py, which leads through a symlink to app.py; declare app.py',
    ),
    _reject(
        "a path in .git", write("a", [".git/config"]), problem='task "a" declares .git/config: .git/config is protected'
    ),
    _reject(
        "a path in .paicli",
        write("a", [".paicli/config.toml"]),
        problem='task "a" declares .paicli/config.toml: .paicli/config.toml is protected',
    ),
    _reject(
        "a folder without its slash",
        write("a", ["src"]),
        problem='task "a" declares src, which is a folder; write src/ to cover what is in it',
    ),
    # ---- rejected: overlapping writers ------------------------------------------------------------------
    _reject(
        "two parallel writers of one file",
        write("a", ["app.py"]),
        write("b", ["./app.py"]),
        problem='tasks "a" and "b" both change app.py and neither depends on the other',
    ),
    _reject(
        "a folder and a file in it",
        write("a", ["src/util.py"]),
        write("b", ["src/"]),
        problem='tasks "a" and "b" both change src/util.py and neither depends on the other',
    ),
    _reject(
        "the whole workspace and any file",
        write("a", ["."]),
        write("b", ["README.md"]),
        problem='tasks "a" and "b" both change README.md and neither depends on the other',
    ),
    _reject(
        "a command and a writer of one file",
        write("a", ["dist/app.js"]),
        task("b", "Build", "COMMAND", files=["dist/"]),
        problem='tasks "a" and "b" both change dist/app.js and neither depends on the other',
    ),
    _reject(
        "siblings after one read",
        read("r", "app.py"),
        write("a", ["app.py"], ["r"]),
        write("b", ["app.py"], ["r"]),
        problem='tasks "a" and "b" both change app.py and neither depends on the other',
    ),
    # ---- rejected: actions -------------------------------------------------------------------------------
    _reject(
        "an unknown tool",
        task("a", "Test", "VERIFICATION", action={"tool": "run_tests", "args": {}}),
        problem="task \"a\" has an action with the unknown tool 'run_tests'",
    ),
    _reject(
        "an action on a FILE_WRITE task",
        write("a", ["app.py"], action={"tool": "write_file", "args": {"path": "app.py", "content": ""}}),
        problem='task "a" is FILE_WRITE and cannot be one tool call: remove its "action"',
    ),
    _reject(
        "an action on an ANALYSIS task",
        task("a", "Think", "ANALYSIS", action={"tool": "read_file", "args": {"path": "app.py"}}),
        problem='task "a" is ANALYSIS and cannot be one tool call: remove its "action"',
    ),
    _reject(
        "a command as a FILE_READ action",
        task("a", "Read", "FILE_READ", action={"tool": "execute_command", "args": {"command": "cat app.py"}}),
        problem='task "a" is FILE_READ: its action must be a read-only tool, not execute_command',
    ),
    _reject(
        "a file write as a VERIFICATION action",
        task("a", "Check", "VERIFICATION", action={"tool": "write_file", "args": {"path": "x", "content": ""}}),
        problem='task "a" is VERIFICATION: its action must be a command (execute_command), not write_file',
    ),
    _reject(
        "a read as a COMMAND action",
        task("a", "Run", "COMMAND", action={"tool": "read_file", "args": {"path": "app.py"}}),
        problem='task "a" is COMMAND: its action must be a command (execute_command), not read_file',
    ),
    _reject(
        "a misspelled argument",
        task("a", "Test", "VERIFICATION", action={"tool": "execute_command", "args": {"cmd": "pytest"}}),
        problem="task \"a\" has an action with bad arguments: execute_command: 'command' is required; "
        "unexpected argument 'cmd' (allowed: command, timeout)",
    ),
    _reject(
        "an argument of the wrong type",
        task("a", "Read", "FILE_READ", action={"tool": "read_file", "args": {"path": "app.py", "limit": "all"}}),
        problem="task \"a\" has an action with bad arguments: read_file: 'limit': Input should be a valid integer",
    ),
    _reject(
        "arguments as a list",
        task("a", "Test", "COMMAND", action={"tool": "execute_command", "args": ["pytest"]}),
        problem='task "a" has "action" arguments that are not a JSON object',
    ),
    _reject(
        "an action as a command string",
        task("a", "Test", "COMMAND", action="pytest -q"),
        problem='task "a" has an "action" without a tool name',
    ),
    _reject(
        "an action without a tool",
        task("a", "Test", "COMMAND", action={"args": {"command": "make"}}),
        problem='task "a" has an "action" without a tool name',
    ),
    # ---- rejected: several problems, one re-ask ----------------------------------------------------------
    _reject(
        "every problem reported together",
        write("a", ["app.py"]),
        write("b", ["app.py"]),
        task("c", "Think", "ANALYSIS", action={"tool": "read_file", "args": {"path": "x"}}),
        problem='task "c" is ANALYSIS and cannot be one tool call: remove its "action"; tasks "a" and "b" both '
        "change app.py",
    ),
]

EVERY_CASE: list[Case] = CASES + CONTRACT_CASES
