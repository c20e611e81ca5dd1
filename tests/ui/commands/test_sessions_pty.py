"""Conversations that last, through a real pseudo-terminal: `-c` after an exit, `/resume` picking an older
one, `/new`, and a saved file that was damaged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect
import pytest

from paicli.app.sessions import sessions_folder
from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import ANSI, PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def talk(child: pexpect.spawn, text: str, answer: str) -> None:
    child.send(text + ENTER)
    expect_text(child, answer)
    child.expect_exact(PROMPT)


def leave(child: pexpect.spawn) -> None:
    child.sendeof()
    child.expect(pexpect.EOF)


def before_prompt(child: pexpect.spawn) -> str:
    """What the REPL showed before the prompt the spawn waited for, without the styling."""
    return re.sub(ANSI, "", child.before)


def user_texts(fake: FakeLLM) -> list[str]:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]


def test_continue_after_exit_brings_back_the_conversation_and_shows_the_last_exchange(
    spawn_repl: Spawn, fake: FakeLLM
) -> None:
    fake.on("remember the word walrus", Reply.text("I will remember walrus."))
    fake.on("what was the word", Reply.text("It was walrus."))
    first = spawn_repl()
    talk(first, "remember the word walrus", "I will remember walrus.")
    leave(first)

    second = spawn_repl("-c")
    shown = before_prompt(second)
    assert "continuing the conversation of" in shown and "(1 turn)" in shown
    assert "you: remember the word walrus" in shown and "I will remember walrus." in shown  # the last exchange
    talk(second, "what was the word", "It was walrus.")
    assert user_texts(fake) == ["remember the word walrus", "what was the word"]
    assistants = [m["content"] for m in fake.requests[-1].messages if m["role"] == "assistant"]
    assert assistants == ["I will remember walrus."]


def test_resume_picks_the_older_of_two_conversations(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("first topic alpha", Reply.text("Alpha noted."))
    fake.on("second topic beta", Reply.text("Beta noted."))
    fake.on("go on", Reply.text("Going on."))
    for question, answer in (("first topic alpha", "Alpha noted."), ("second topic beta", "Beta noted.")):
        child = spawn_repl()
        talk(child, question, answer)
        leave(child)

    child = spawn_repl()
    child.send("/resume" + ENTER)
    expect_text(child, "1 turn")  # number, time of the last change, turns, tokens, first message
    expect_text(child, "tokens  second topic beta")  # newest first
    expect_text(child, "1 turn")
    expect_text(child, "tokens  first topic alpha")
    expect_text(child, "resume which?")
    child.send("2" + ENTER)
    expect_text(child, "continuing the conversation of")
    expect_text(child, "Alpha noted.")  # its last exchange
    child.expect_exact(PROMPT)
    talk(child, "go on", "Going on.")
    assert user_texts(fake) == ["first topic alpha", "go on"]


def test_new_starts_a_fresh_conversation_and_keeps_the_old_one(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("old subject", Reply.text("Old answer."))
    fake.on("new subject", Reply.text("New answer."))
    child = spawn_repl()
    talk(child, "old subject", "Old answer.")
    child.send("/new" + ENTER)
    expect_text(child, "new conversation")
    child.expect_exact(PROMPT)
    talk(child, "new subject", "New answer.")
    assert user_texts(fake) == ["new subject"]
    child.send("/resume" + ENTER)
    expect_text(child, "new subject  ← this conversation")  # marked, not numbered
    expect_text(child, "old subject")
    expect_text(child, "resume which? [1-1")
    child.send(ENTER)
    child.expect_exact(PROMPT)


def test_resume_after_continue_lists_this_conversation_marked_and_the_others(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("older question", Reply.text("Older answer."))
    fake.on("newer question", Reply.text("Newer answer."))
    for question, answer in (("older question", "Older answer."), ("newer question", "Newer answer.")):
        child = spawn_repl()
        talk(child, question, answer)
        leave(child)

    child = spawn_repl("-c")
    child.send("/resume" + ENTER)
    expect_text(child, "tokens  newer question  ← this conversation")
    expect_text(child, "tokens  older question")
    expect_text(child, "resume which? [1-1, Enter keeps this one]")
    assert "no saved conversation" not in child.before
    child.send(ENTER)
    child.expect_exact(PROMPT)


def test_resume_with_only_this_conversation_shows_it_and_says_there_is_no_other(
    spawn_repl: Spawn, fake: FakeLLM
) -> None:
    fake.on("only question", Reply.text("Only answer."))
    child = spawn_repl()
    talk(child, "only question", "Only answer.")
    leave(child)
    child = spawn_repl("-c")
    child.send("/resume" + ENTER)
    expect_text(child, "only question  ← this conversation")
    expect_text(child, "no other saved conversation in this workspace yet")
    child.expect_exact(PROMPT)


def test_a_damaged_session_file_loads_what_can_be_read_with_a_notice(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path, home: Path
) -> None:
    folder = sessions_folder(home, workspace)
    folder.mkdir(parents=True)
    said = [{"role": "user", "content": "the colour is teal"}, {"role": "assistant", "content": "Teal it is."}]
    good = {"kind": "turn", "ts": 1.0, "tokens": 10, "messages": said}
    (folder / "20260101-120000-abcdef.jsonl").write_text(
        json.dumps({"kind": "start", "ts": 1.0, "model": "m"})
        + "\n"
        + json.dumps(good)
        + "\n"
        + "\x00\x00garbage that is not json\n"
        + '{"kind": "turn", "messages": [{"role": "us'
    )
    fake.on("which colour", Reply.text("Teal."))
    child = spawn_repl("-c")
    shown = before_prompt(child)
    assert "has 2 damaged lines: loaded what could be read" in shown and "Teal it is." in shown
    talk(child, "which colour", "Teal.")
    assert user_texts(fake) == ["the colour is teal", "which colour"]
