"""paicli in a real pseudo-terminal read through a terminal emulator (pyte), for tests about what the screen
shows: the toolbar, wrapping at a width, a redraw after a resize.

The emulator answers prompt_toolkit's cursor-position requests as a terminal does, so the prompt knows the
rows below it and draws its bottom toolbar (with PROMPT_TOOLKIT_NO_CPR it never does).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

from tests.conftest import paicli_pty
from tests.fakellm import FakeLLM
from tests.ui.conftest import REPO, pty_env


class Terminal:
    def __init__(self, child: pexpect.spawn, rows: int, columns: int) -> None:
        self.child = child
        self.screen = pyte.HistoryScreen(columns, rows, history=2000)
        self.screen.write_process_input = child.send  # answers cursor-position requests (ESC [ 6 n)
        self.stream = pyte.Stream(self.screen)

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def scrolled(self) -> list[str]:
        """The lines scrolled off the top, then the screen's: everything shown since the start."""
        columns = self.screen.columns
        gone = ["".join(line[x].data for x in range(columns)).rstrip() for line in self.screen.history.top]
        return gone + self.lines

    def pump(self, seconds: float = 0.05) -> None:
        """Feeds what paicli wrote in the next `seconds` into the emulator."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=max(0.0, deadline - time.monotonic())))
            except pexpect.TIMEOUT:
                return
            if time.monotonic() >= deadline:
                return

    def wait_for(self, found: str | Callable[[Terminal], bool], timeout: float = 10) -> None:
        """Until `found` is on the screen (or the condition holds)."""
        check = found if callable(found) else (lambda term: found in term.text)
        deadline = time.monotonic() + timeout
        while not check(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {found!r}; the screen shows:\n{self.text}")
            self.pump()

    def send(self, text: str) -> None:
        self.child.send(text)

    def resize(self, rows: int, columns: int, *, reflow: bool = True) -> None:
        """Makes the screen narrower (SIGWINCH). With `reflow`, as most terminals do: a line wider than the new
        width continues on the next rows (pyte alone cuts it, as xterm does)."""
        self.pump()
        if reflow and columns < self.screen.columns:
            self._reflow(rows, columns)
        else:
            self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def _reflow(self, rows: int, columns: int) -> None:
        screen = self.screen
        lines, (x, y) = self.lines, (screen.cursor.x, screen.cursor.y)
        flowed: list[str] = []
        cursor = (0, 0)
        for number, line in enumerate(lines[: y + 1]):
            if number == y:  # past the last column (a full line, wrap pending): it stays on that line's last row
                at = x - 1 if x == screen.columns else x
                cursor = (at % columns + (x == screen.columns), len(flowed) + at // columns)
            flowed += [line[i : i + columns] for i in range(0, len(line), columns)] or [""]
        screen.resize(rows, columns)
        screen.reset()
        top = max(0, cursor[1] - rows + 1)  # what no longer fits scrolls off the top
        for row, text in enumerate(flowed[top:]):
            for column, char in enumerate(text):
                screen.buffer[row][column] = pyte.screens.Char(char)
        screen.cursor_position(cursor[1] - top + 1, cursor[0] + 1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()


def start_terminal(
    fake: FakeLLM, home: Path, workspace: Path, *args: str, rows: int = 30, columns: int = 100
) -> Terminal:
    env = pty_env(fake, home) | {"PROMPT_TOOLKIT_NO_CPR": "0", "TERM": "xterm-256color"}
    child = paicli_pty(
        ["-C", str(workspace), *args],
        cwd=str(REPO),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=10,
        dimensions=(rows, columns),
    )
    terminal = Terminal(child, rows, columns)
    terminal.wait_for("›")
    return terminal


Start = Callable[..., Terminal]  # the `terminal` fixture (tests/ui/conftest.py): start(*args, rows=, columns=)
