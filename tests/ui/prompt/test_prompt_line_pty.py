"""The prompt line in a real pseudo-terminal: ESC acts at once, Ctrl+J adds a line, Shift+Tab cycles the
approval mode (yolo only after a confirmation), and the toolbar shows the mode, the sandbox and how full
the context is."""

from __future__ import annotations

import re
import time

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, system_is
from tests.ui.conftest import Spawn, expect_text
from tests.ui.terminal import Start, Terminal

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"
CTRL_J = "\n"
SHIFT_TAB = "\x1b[Z"


def toolbar(term: Terminal) -> str:
    return term.lines[-1]


def toolbar_starts(term: Terminal, text: str) -> None:
    term.wait_for(lambda t: toolbar(t).startswith(text))


def user_messages(fake: FakeLLM) -> list[str]:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]


def test_esc_at_the_prompt_acts_at_once(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("tidy up", Reply.text("Tidied."))
    child = spawn_repl()
    child.send("/plan" + ENTER)
    expect_text(child, "next message will be planned")
    expect_text(child, "plan› ")
    sent = time.monotonic()
    child.send(ESC)  # drops the planned message: the prompt is redrawn without "plan"
    child.expect_exact("›")
    # prompt_toolkit's default waits 1.5 s for the rest of a key sequence; loose bound, the machine is shared
    assert time.monotonic() - sent < 0.9
    child.send("tidy up" + ENTER)
    expect_text(child, "Tidied.")
    assert not [r for r in fake.requests if r.body and system_is(PLANNER)(r.body)]  # a chat turn, not a plan


def test_ctrl_j_adds_a_line_and_enter_sends(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("line one", Reply.text("Two lines."))
    child = spawn_repl()
    child.send("line one" + CTRL_J)
    child.send("line two" + ENTER)
    expect_text(child, "Two lines.")
    assert len(fake.requests) == 1
    assert user_messages(fake) == ["line one\nline two"]


def test_shift_tab_cycles_the_mode_shown_in_the_toolbar_and_yolo_needs_a_confirmation(terminal: Start) -> None:
    term = terminal()
    toolbar_starts(term, " ask · ")
    assert "sandbox" in toolbar(term)
    term.wait_for(lambda t: bool(re.search(r"· ctx \d+% ·", toolbar(t))))  # once the REPL is built
    term.send(SHIFT_TAB)
    toolbar_starts(term, " auto · ")
    term.send(SHIFT_TAB)
    toolbar_starts(term, " yolo runs every command unasked: Shift+Tab again confirms, Esc keeps auto")
    term.send(ESC)
    toolbar_starts(term, " auto · ")
    term.send("/approval" + ENTER)
    term.wait_for("approval mode: auto")
    term.send(SHIFT_TAB)
    toolbar_starts(term, " yolo runs every command")
    term.send(SHIFT_TAB)
    toolbar_starts(term, " yolo · ")
    term.send("/approval" + ENTER)
    term.wait_for("approval mode: yolo")
    term.send(SHIFT_TAB)
    toolbar_starts(term, " ask · ")
    term.send("/approval" + ENTER)
    term.wait_for("approval mode: ask")


def test_typing_keeps_the_mode_instead_of_confirming_yolo(terminal: Start) -> None:
    term = terminal("--approval", "auto")
    toolbar_starts(term, " auto · ")
    term.send(SHIFT_TAB)
    toolbar_starts(term, " yolo runs every command")
    term.send("x")
    toolbar_starts(term, " auto · ")
    term.send("\x7f/approval" + ENTER)
    term.wait_for("approval mode: auto")


def test_approval_command_changes_the_mode_in_the_toolbar(terminal: Start) -> None:
    term = terminal()
    toolbar_starts(term, " ask · ")
    term.send("/approval yolo" + ENTER)
    term.wait_for("approval mode: yolo")
    toolbar_starts(term, " yolo · ")


def test_the_context_meter_grows_with_the_conversation(terminal: Start, fake: FakeLLM) -> None:
    fake.on("", Reply.text("ok " * 2000))
    term = terminal()
    term.wait_for(lambda t: bool(re.search(r"ctx (\d+)%", toolbar(t))))
    before = int(re.findall(r"ctx (\d+)%", toolbar(term))[0])
    term.send("x" * 4000 + ENTER)
    term.wait_for(
        lambda t: (
            bool(re.search(r"ctx (\d+)%", toolbar(t)))
            and fake.requests != []
            and int(re.findall(r"ctx (\d+)%", toolbar(t))[0]) > before
        ),
        timeout=20,
    )
