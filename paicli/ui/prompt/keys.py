"""The keyboard while a turn runs: ESC or Ctrl-C cancels it at once.

The terminal is put in raw mode and read through prompt_toolkit's input, so a lone ESC arrives as a key
(no Enter needed) and Ctrl-C arrives as a key rather than a signal. SIGINT from elsewhere (`kill -INT`,
a terminal that is not a TTY) cancels too. Alt+key combinations arrive as ESC + key, so they cancel as well;
arrow and function keys are whole escape sequences and do not.

Type-ahead: printable characters typed during a turn are collected (Backspace removes the last one) and
the REPL puts them in the next prompt, unsent. Every other key (Enter, arrows, Tab, ...) is dropped, so
nothing typed while the agent works is ever submitted by accident.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import termios
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TextIO

from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

# Seconds to wait for the rest of an escape sequence before a lone ESC counts, here and at every prompt
# (prompt_toolkit's own default, 1.5 s in all, made ESC feel dead). Alt+Enter and the arrow keys arrive
# in one read, so they still work.
ESCAPE_WAIT = 0.05
# Seconds to wait for the second key of a two-key binding (Esc then Enter) before the first acts alone:
# prompt_toolkit's own 1 s would come on top of the wait above. Alt+Enter arrives in one read and still works.
CHORD_WAIT = 0.01
CANCEL_KEYS = {Keys.Escape, Keys.ControlC}
ERASE_KEYS = {Keys.Backspace, Keys.ControlH}


class CancelKeys:
    """A context manager, entered inside the running event loop, for the duration of one turn."""

    def __init__(self, on_cancel: Callable[[], None], input: Input | None = None) -> None:
        self.on_cancel = on_cancel
        self.typed: list[str] = []
        self._input = input
        self._stack = contextlib.ExitStack()
        self._flush_timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pauses = 0

    @property
    def typeahead(self) -> str:
        return "".join(self.typed)

    def __enter__(self) -> CancelKeys:
        self._loop = asyncio.get_running_loop()
        self._watch()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stack.close()

    def pause(self) -> None:
        """Gives the keyboard back (cooked mode, input detached) while another prompt reads it, e.g. the
        plan review or an approval question. Calls nest; `resume` undoes one."""
        self._pauses += 1
        if self._pauses == 1:
            self._stack.close()

    def resume(self) -> None:
        if self._pauses == 0:
            return
        self._pauses -= 1
        if self._pauses == 0:
            self._stack = contextlib.ExitStack()
            self._watch()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def _watch(self) -> None:
        assert self._loop is not None
        try:
            self._loop.add_signal_handler(signal.SIGINT, self.on_cancel)
            self._stack.callback(self._loop.remove_signal_handler, signal.SIGINT)
        except (NotImplementedError, RuntimeError):  # not the main thread
            pass
        try:
            if self._input is None:
                self._input = create_input()
            self._stack.enter_context(self._input.raw_mode())
            self._stack.enter_context(self._input.attach(self._on_ready))
        except (EOFError, OSError):
            pass  # stdin cannot be watched (closed, /dev/null): SIGINT still cancels
        self._stack.callback(self._cancel_flush)

    def _on_ready(self) -> None:
        assert self._input is not None and self._loop is not None
        self._handle(self._input.read_keys())
        # A lone ESC stays in the parser (it might start an escape sequence) until flushed.
        self._cancel_flush()
        self._flush_timer = self._loop.call_later(ESCAPE_WAIT, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        if self._input is not None:
            self._handle(self._input.flush_keys())

    def _cancel_flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None

    def _handle(self, keys: list[KeyPress]) -> None:
        for press in keys:
            if press.key in CANCEL_KEYS:
                self.on_cancel()
            elif press.key in ERASE_KEYS:
                if self.typed:
                    self.typed.pop()
            elif isinstance(press.key, str) and len(press.data) == 1 and press.data.isprintable():
                self.typed.append(press.data)


@contextlib.contextmanager
def enter_stays_enter(stream: TextIO | None = None) -> Iterator[None]:
    """Keeps the Enter key's CR a CR for the REPL's lifetime. Between two prompts the terminal is in its
    normal mode, whose line discipline turns CR into LF (ICRNL) as the key arrives: an Enter typed ahead
    would reach the next prompt as Ctrl+J, which adds a new line instead of sending."""
    with _cr_translation(stream, on=False):
        yield


@contextlib.contextmanager
def enter_ends_lines(stream: TextIO | None = None) -> Iterator[None]:
    """The terminal's usual CR → LF for a program that reads lines itself (an editor like `ed`)."""
    with _cr_translation(stream, on=True):
        yield


@contextlib.contextmanager
def _cr_translation(stream: TextIO | None, *, on: bool) -> Iterator[None]:
    try:
        fd = (stream or sys.stdin).fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):  # not a terminal
        yield
        return
    changed = list(saved)
    changed[0] = changed[0] | termios.ICRNL if on else changed[0] & ~termios.ICRNL
    termios.tcsetattr(fd, termios.TCSANOW, changed)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
