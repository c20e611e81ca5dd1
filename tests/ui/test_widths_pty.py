"""Narrow terminals, through a terminal emulator: /help and notices wrap at spaces at 40, 60 and 80
columns (no word cut at the screen's edge)."""

from __future__ import annotations

import pytest

from paicli.ui.commands.table import COMMANDS, KEYS_HELP
from tests.fakellm import FakeLLM, Reply
from tests.ui.terminal import Start, Terminal

pytestmark = pytest.mark.pty

ENTER = "\r"
LONG_NAMES = [f"organisation-{n}/very-long-model-name-{n}" for n in range(6)]


def words_shown(term: Terminal) -> set[str]:
    return {word for line in term.scrolled for word in line.split()}


def missing_words(term: Terminal, text: str) -> set[str]:
    return set(text.split()) - words_shown(term)


@pytest.mark.parametrize("columns", [40, 60, 80])
def test_help_and_notices_wrap_at_spaces(columns: int, fake: FakeLLM, terminal: Start) -> None:
    fake.models_reply = Reply.models(*LONG_NAMES)
    term = terminal(rows=24, columns=columns)
    expected = " ".join([*(f"{c.name} {c.usage} {c.summary}" for c in COMMANDS), *KEYS_HELP])
    term.send("/help" + ENTER)
    term.wait_for(lambda t: not missing_words(t, expected), timeout=15)
    term.send("/model nonsense-name" + ENTER)
    refusal = "the server does not list nonsense-name; it lists " + ", ".join(LONG_NAMES)
    term.wait_for(lambda t: not missing_words(t, refusal), timeout=15)
    assert all(len(line) <= columns for line in term.scrolled)
