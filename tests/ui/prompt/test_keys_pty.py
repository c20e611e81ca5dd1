"""The keys of the REPL prompt, through a real pseudo-terminal: history search, paste, per-workspace
history, Ctrl-L, and /help naming them."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply, last_message_contains
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
CTRL_R = "\x12"
CTRL_L = "\x0c"
UP = "\x1b[A"
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def user_messages(fake: FakeLLM) -> list[str]:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]


def test_ctrl_r_finds_an_earlier_message_and_enter_sends_it(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on(last_message_contains("alpha question"), Reply.text("Alpha answer."), repeat=True)
    fake.on("beta question", Reply.text("Beta answer."))
    child = spawn_repl()
    child.send("alpha question" + ENTER)
    expect_text(child, "Alpha answer.")
    child.expect_exact(PROMPT)
    child.send("beta question" + ENTER)
    expect_text(child, "Beta answer.")
    child.expect_exact(PROMPT)
    child.send(CTRL_R)
    child.send("alph")
    expect_text(child, "alpha question")
    child.send(ENTER)  # accepts the search: the found line is in the prompt
    child.send(ENTER)  # and sends it
    expect_text(child, "Alpha answer.")
    assert user_messages(fake)[-1] == "alpha question"
    assert len(fake.requests) == 3


def test_a_bracketed_paste_of_several_lines_is_one_message(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("first pasted line", Reply.text("Got the paste."))
    child = spawn_repl()
    child.send(PASTE_START + "first pasted line\nsecond pasted line\n" + PASTE_END)
    child.send(ENTER)
    expect_text(child, "Got the paste.")
    assert len(fake.requests) == 1
    assert user_messages(fake) == ["first pasted line\nsecond pasted line\n"]


def test_history_is_per_workspace(spawn_repl: Spawn, fake: FakeLLM, workspace: Path, tmp_path: Path) -> None:
    fake.on("only in the first workspace", Reply.text("Noted."))
    fake.on("", Reply.text("Other."), repeat=True)
    child = spawn_repl()
    child.send("only in the first workspace" + ENTER)
    expect_text(child, "Noted.")
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    other = tmp_path / "other-ws"
    other.mkdir()
    child = spawn_repl("-C", str(other))
    child.send(UP + ENTER)
    child.send("typed here" + ENTER)
    expect_text(child, "Other.")
    assert user_messages(fake) == ["typed here"]  # Up found nothing from the first workspace
    assert len(fake.requests) == 2
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child = spawn_repl()
    child.send(UP)
    child.send(ENTER)
    expect_text(child, "Other.")
    assert user_messages(fake)[-1] == "only in the first workspace"


def test_ctrl_l_clears_the_screen_and_help_lists_the_keys(spawn_repl: Spawn, fake: FakeLLM) -> None:
    child = spawn_repl()
    child.send(CTRL_L)
    child.expect_exact("\x1b[2J")
    child.expect_exact(PROMPT)
    child.send("/help" + ENTER)
    for text in ("Ctrl-R searches it", "Ctrl-L clears the screen", "!COMMAND", "@PATH"):
        expect_text(child, text)
    assert fake.requests == []
