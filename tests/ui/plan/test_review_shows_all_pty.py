"""The review screen shows everything that will run and be written (issues 29 and 31): a command's second
line is not hidden behind a comment on its first, the whole write set is listed folded or not, and Ctrl+O
shows a command line by line as the approval question does. Through a real pseudo-terminal read by a
terminal emulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, system_is
from tests.ui.terminal import Terminal

pytestmark = pytest.mark.pty

CTRL_O, ESC, ENTER = "\x0f", "\x1b", "\r"
FILES = [f"src/module_{n}.py" for n in range(7)]


def plan_reply(command: str) -> Reply:
    tasks = [
        {"id": "write", "description": "write the modules", "type": "FILE_WRITE", "dependencies": [], "files": FILES},
        {
            "id": "check",
            "description": "run the checks",
            "type": "COMMAND",
            "dependencies": ["write"],
            "action": {"tool": "execute_command", "args": {"command": command}},
        },
    ]
    return Reply.text(json.dumps({"summary": "write then check", "tasks": tasks}))


def seen(term: Terminal) -> str:
    return "\n".join(term.scrolled)


def test_a_hidden_second_line_and_the_whole_write_set_are_shown(
    terminal: Callable[..., Terminal], fake: FakeLLM, workspace: Path
) -> None:
    fake.on(system_is(PLANNER), plan_reply("echo tests-ok # later: touch pwned\ntouch pwned"))
    term = terminal("--no-review", rows=40, columns=100)
    term.send("/plan check it" + ENTER)
    term.wait_for("(2 lines", timeout=15)
    folded = seen(term)
    assert "echo tests-ok # later: touch pwned ⏎ touch pwned" in folded
    flat = "".join(line.strip() for line in term.scrolled)  # rich breaks lines at spaces
    assert all(path in flat for path in FILES)  # the whole write set, never "and N more"
    term.send(CTRL_O)
    term.wait_for("2 touch pwned", timeout=10)
    expanded = seen(term).rsplit("runs these 2 lines", 1)[1]
    assert "1 echo tests-ok # later: touch pwned ⏎" in expanded
    term.send(ESC)
    term.wait_for("cancelled", timeout=10)
    assert not (workspace / "pwned").exists()


def test_a_long_command_wraps_on_a_narrow_screen_and_is_not_cut(
    terminal: Callable[..., Terminal], fake: FakeLLM, workspace: Path
) -> None:
    tail = "and-this-is-the-very-end"
    fake.on(
        system_is(PLANNER),
        plan_reply("python -m pytest -q " + " ".join(f"tests/t{n}.py" for n in range(12)) + f" {tail}\r\nrm -f x"),
    )
    term = terminal("--no-review", rows=40, columns=60)
    term.send("/plan check it" + ENTER)
    term.wait_for("(2 lines", timeout=15)
    flat = "".join(line.strip() for line in term.scrolled)  # rich breaks lines at spaces; the words all show
    assert tail in flat and "⏎rm-fx" in flat.replace(" ", "")
    assert all(len(line) <= 60 for line in term.scrolled)
    term.send(ESC)
    term.wait_for("cancelled", timeout=10)
