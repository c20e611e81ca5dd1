"""Fixtures for the REPL tests: a fake model server and paicli started in a real pseudo-terminal."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest

from tests.conftest import paicli_pty
from tests.fakellm import FakeLLM

if TYPE_CHECKING:
    from tests.ui.terminal import Terminal

REPO = Path(__file__).resolve().parents[2]
PROMPT = "› "
Spawn = Callable[..., pexpect.spawn]
ANSI = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"  # style codes rich may put between any two characters


def expect_text(child: pexpect.spawn, text: str, timeout: float | None = -1) -> None:
    """Waits until `text` shows, ignoring the terminal styling (bold, colours) in between; a space may be
    where the line was wrapped (paicli wraps its lines at spaces)."""
    child.expect(ANSI.join(SPACE if ch == " " else re.escape(ch) for ch in text), timeout=timeout)


SPACE = r"(?: ?(?:\x1b\[[0-9;?]*[A-Za-z])*\r*\n| )"  # rich keeps the space before the break


def pty_env(fake: FakeLLM, home: Path) -> dict[str, str]:
    """A small, predictable environment for paicli in a pseudo-terminal, talking to the fake."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "xterm",
        "LANG": "C.UTF-8",
        "PAICLI_API_KEY": "test-key",
        "PAICLI_BASE_URL": fake.base_url,
        "PROMPT_TOOLKIT_NO_CPR": "1",  # no terminal answers cursor-position requests here
    }


@pytest.fixture
def spawn_repl(fake: FakeLLM, workspace: Path, home: Path) -> Iterator[Spawn]:
    """Starts `python -m paicli -C <workspace>` in a pseudo-terminal and waits for its first prompt."""
    children: list[pexpect.spawn] = []

    def start(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
        env = pty_env(fake, home) | (env or {})
        child = paicli_pty(
            ["-C", str(workspace), *args],
            cwd=str(REPO),
            env=env,
            encoding="utf-8",
            codec_errors="replace",
            timeout=10,
            dimensions=(40, 120),
        )
        children.append(child)
        child.expect_exact(PROMPT)
        return child

    yield start
    for child in children:
        if child.isalive():
            child.terminate(force=True)
        child.close()


@pytest.fixture
def terminal(fake: FakeLLM, workspace: Path, home: Path) -> Iterator[Callable[..., Terminal]]:
    """Starts paicli in a pseudo-terminal read through a terminal emulator (tests/ui/terminal.py):
    `terminal(*args, rows=30, columns=100)`."""
    from tests.ui.terminal import start_terminal

    started: list[Terminal] = []

    def start(*args: str, rows: int = 30, columns: int = 100) -> Terminal:
        started.append(start_terminal(fake, home, workspace, *args, rows=rows, columns=columns))
        return started[-1]

    yield start
    for term in started:
        term.close()
