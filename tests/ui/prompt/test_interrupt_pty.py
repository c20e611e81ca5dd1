"""Leaving the REPL, through a real pseudo-terminal (issue 32, items 5 and 11): Ctrl+C on an empty line says
how to leave and a second one leaves; Ctrl+C on a line with text only clears it; leaving a conversation says
how to come back to it."""

from __future__ import annotations

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER, CTRL_C = "\r", "\x03"


def test_ctrl_c_twice_on_an_empty_line_exits_and_on_text_clears_it(spawn_repl: Spawn) -> None:
    child = spawn_repl()
    child.send("a draft")
    child.send(CTRL_C)  # clears the line: no warning, and it does not count towards leaving
    child.expect_exact(PROMPT)
    child.send(CTRL_C)
    expect_text(child, "Ctrl+C again to exit · Ctrl+D exits")
    assert child.isalive()
    child.send(CTRL_C)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "continues this conversation" not in (child.before or "")  # nothing was said: nothing to continue


def test_exit_after_a_conversation_says_how_to_continue_it(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("Hello there."))
    child = spawn_repl()
    child.send("hello" + ENTER)
    expect_text(child, "Hello there.")
    child.expect_exact(PROMPT)
    child.send("/exit" + ENTER)
    expect_text(child, "paicli -c continues this conversation")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
