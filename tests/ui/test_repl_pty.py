"""The REPL driven through a real pseudo-terminal against the fake model server."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply, has_tool_result, last_message_contains
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"
CTRL_C = "\x03"
CTRL_D = "\x04"


def send_line(child: pexpect.spawn, text: str) -> None:
    child.send(text)
    child.send(ENTER)


def user_messages(fake: FakeLLM, index: int = -1) -> list[str]:
    return [m["content"] for m in fake.requests[index].messages if m["role"] == "user"]


def test_a_message_streams_the_answer_and_the_usage(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("Hi from the fake model.\n\nA second paragraph.", chunk=4))
    child = spawn_repl()
    send_line(child, "hello")
    expect_text(child, "Hi from the fake model.")
    expect_text(child, "A second paragraph.")
    child.expect(r"↑ [\d,]+ ↓ [\d,]+ tokens")
    child.expect_exact(PROMPT)
    assert user_messages(fake) == ["hello"]
    assert fake.requests[0].messages[0]["role"] == "system"


def test_esc_or_ctrl_c_cancels_a_hanging_reply_and_closes_the_request(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("slow question", Reply.hang(after_chunks=2, content="partial answer that hangs"))
    fake.on("stuck question", Reply.hang())
    fake.on("next question", Reply.text("Fresh answer."))
    child = spawn_repl()
    for question, key, count in (("slow question", ESC, 1), ("stuck question", CTRL_C, 2)):
        send_line(child, question)
        request = fake.wait_for_requests(count, timeout=10)[-1]
        child.send(key)
        expect_text(child, "cancelled", timeout=5)
        child.expect_exact(PROMPT, timeout=5)
        assert request.wait_finished(timeout=5)
        assert request.disconnected
    # The unanswered questions are not part of the conversation any more.
    send_line(child, "next question")
    expect_text(child, "Fresh answer.")
    assert user_messages(fake) == ["next question"]


def test_cancel_after_a_tool_round_keeps_the_conversation_consistent(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    fake.on(last_message_contains("then continue"), Reply.text("Continuing."))
    fake.on(has_tool_result("read_file"), Reply.hang())
    fake.on("read the notes", Reply.tool_calls([("read_file", {"path": "notes.txt"}, "call_notes")]))
    child = spawn_repl()
    send_line(child, "read the notes")
    expect_text(child, "⏺ read_file notes.txt")
    fake.wait_for_requests(2, timeout=10)
    child.send(ESC)
    expect_text(child, "cancelled", timeout=5)
    child.expect_exact(PROMPT, timeout=5)
    send_line(child, "then continue")
    expect_text(child, "Continuing.")
    roles = [(m["role"], m.get("tool_call_id")) for m in fake.requests[-1].messages]
    assert roles == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_notes"),
        ("user", None),
    ]


def test_a_tool_call_turn_shows_the_tool_line_and_result(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    fake.on(has_tool_result("read_file"), Reply.text("The notes have three lines."))
    fake.on("read the notes", Reply.tool_calls([("read_file", {"path": "notes.txt"})]))
    child = spawn_repl()
    send_line(child, "read the notes")
    expect_text(child, "⏺ read_file notes.txt")
    expect_text(child, "⎿")
    expect_text(child, "The notes have three lines.")
    child.expect_exact(PROMPT)


def test_a_model_error_is_one_line_and_the_repl_goes_on(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("break", Reply.error(400, "the fake refuses this request"))
    fake.on("mend", Reply.text("All good again."))
    child = spawn_repl()
    send_line(child, "break")
    expect_text(child, "the fake refuses this request")
    child.expect_exact(PROMPT)
    send_line(child, "mend")
    expect_text(child, "All good again.")
    assert user_messages(fake) == ["mend"]


def test_help_lists_the_commands_and_unknown_ones_are_one_error_line(spawn_repl: Spawn, fake: FakeLLM) -> None:
    child = spawn_repl()
    send_line(child, "/help")
    for name in ("/help", "/clear", "/model [NAME]", "/exit"):
        expect_text(child, name)
    child.expect_exact(PROMPT)
    send_line(child, "/frobnicate now")
    expect_text(child, "unknown command /frobnicate")
    child.expect_exact(PROMPT)
    assert fake.requests == []


def test_model_and_clear_apply_to_the_session_and_quit_leaves(spawn_repl: Spawn, fake: FakeLLM, home: Path) -> None:
    fake.on("first", Reply.text("One."))
    fake.on("second", Reply.text("Two."))
    child = spawn_repl("--model", "first-model")
    send_line(child, "/model")
    expect_text(child, "model: first-model")
    expect_text(child, "Switch to which model?")  # the picker of what GET /models lists
    child.send("\x1b")
    expect_text(child, "model unchanged: first-model")
    child.expect_exact(PROMPT)
    send_line(child, "first")
    expect_text(child, "One.")
    send_line(child, "/model second-model")
    expect_text(child, "model switched to second-model")
    send_line(child, "/clear")
    expect_text(child, "conversation cleared")
    send_line(child, "second")
    expect_text(child, "Two.")
    bodies = [request.body or {} for request in fake.requests]
    assert [body["model"] for body in bodies] == ["first-model", "second-model"]
    assert user_messages(fake) == ["second"]  # the first exchange was forgotten
    send_line(child, "/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    (history,) = (home / ".paicli" / "history").iterdir()
    assert "first" in history.read_text()


def test_ctrl_c_at_the_prompt_clears_the_line_and_alt_enter_starts_a_new_one(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("fresh", Reply.text("Fresh."))
    child = spawn_repl()
    child.send("draft text")
    child.send(CTRL_C)
    child.expect_exact(PROMPT)
    child.send("fresh start")
    child.send(ESC + ENTER)  # Alt+Enter as terminals send it
    send_line(child, "second line")
    expect_text(child, "Fresh.")
    assert user_messages(fake) == ["fresh start\nsecond line"]


def test_text_typed_during_a_turn_waits_in_the_next_prompt(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("slow", Reply.text("Slow answer.", latency=1.0))
    fake.on("typed ahead", Reply.text("Got it."))
    child = spawn_repl()
    send_line(child, "slow")
    fake.wait_for_requests(1, timeout=10)
    child.send("typed ahead")
    expect_text(child, "Slow answer.")
    child.expect_exact(PROMPT)
    child.send(ENTER)
    expect_text(child, "Got it.")
    assert user_messages(fake) == ["slow", "typed ahead"]


def test_ctrl_d_exits_with_0(spawn_repl: Spawn) -> None:
    child = spawn_repl()
    child.send(CTRL_D)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
