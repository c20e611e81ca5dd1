"""Saved conversations on disk: appended as they go, masked, read back past a damaged line, pruned."""

from __future__ import annotations

import json
import os
from pathlib import Path

from paicli.app.conversations import ConversationLog, last_exchange, latest_session, restore
from paicli.app.sessions import SessionStore, sessions_folder
from paicli.llm.types import Message

SECRET = "sk-live-0123456789abcdef"


def store_in(tmp_path: Path, keep: int = 100) -> SessionStore:
    return SessionStore(tmp_path / "sessions", keep=keep, secrets=[SECRET])


def exchange(question: str, answer: str) -> list[Message]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def test_a_conversation_is_appended_turn_by_turn_and_read_back(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    log = ConversationLog(store, model="m", notify=print)
    system: Message = {"role": "system", "content": "you are paicli"}
    log.save([system])
    assert store.ids() == []  # nothing worth saving: no file
    first = [system, *exchange("fix the test", "Fixed.")]
    log.save(first, usage_total=120)
    second = [*first, *exchange("and the docs", "Done.")]
    log.save(second, usage_total=300)
    assert log.session_id is not None and store.ids() == [log.session_id]
    session = store.load(log.session_id)
    assert session.messages == second[1:]  # the system prompt is not saved
    assert (session.summary.turns, session.summary.tokens, session.summary.first_message) == (2, 300, "fix the test")
    assert session.damaged_lines == 0
    lines = store.path_of(log.session_id).read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["start", "turn", "turn"]


def test_a_replaced_conversation_is_written_whole(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    log = ConversationLog(store, model="m", notify=print)
    log.save(exchange("a", "b") + exchange("c", "d"))
    compressed = [{"role": "user", "content": "[Earlier conversation, compressed]\n\nstate"}, *exchange("e", "f")]
    log.save(compressed)
    assert log.session_id is not None
    assert store.load(log.session_id).messages == compressed


def test_secrets_are_masked_and_control_characters_escaped(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    log = ConversationLog(store, model="m", notify=print)
    log.save(exchange(f"my key is {SECRET}", "noted \x1b]52;x\x07 \u202e \ud800"))
    assert log.session_id is not None
    text = store.path_of(log.session_id).read_text()
    assert SECRET not in text and "\x1b" not in text and "\\u001b" in text
    assert store.load(log.session_id).messages[0]["content"] == "my key is ***"
    # a lone surrogate is written escaped and read back as U+FFFD: nothing read from a file carries one
    assert store.load(log.session_id).messages[1]["content"] == "noted \x1b]52;x\x07 \u202e \ufffd"
    assert "\u202e" not in text
    assert os.stat(store.path_of(log.session_id)).st_mode & 0o077 == 0


def test_a_damaged_line_is_skipped_and_counted_and_the_next_record_starts_a_line(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    log = ConversationLog(store, model="m", notify=print)
    log.save(exchange("one", "1"))
    assert log.session_id is not None
    path = store.path_of(log.session_id)
    with path.open("ab") as file:
        file.write(b'{"kind": "turn", "messages": [{"role": "user", "cont')  # torn by a crash
    session = store.load(log.session_id)
    assert session.messages == exchange("one", "1") and session.damaged_lines == 1
    log.save(exchange("one", "1") + exchange("two", "2"))
    again = store.load(log.session_id)
    assert again.messages == exchange("one", "1") + exchange("two", "2") and again.damaged_lines == 1


def test_only_the_newest_conversations_are_kept(tmp_path: Path) -> None:
    store = store_in(tmp_path, keep=2)
    ids = []
    for number in range(4):
        log = ConversationLog(store, model="m", notify=print)
        log.save(exchange(f"question {number}", "answer"))
        assert log.session_id is not None
        os.utime(store.path_of(log.session_id), (1000 + number, 1000 + number))
        ids.append(log.session_id)
    assert sorted(store.ids()) == sorted(ids[2:])
    latest = latest_session(store)
    assert latest is not None and latest.summary.first_message == "question 3"


def test_a_write_that_fails_is_told_once_and_the_conversation_goes_on(tmp_path: Path) -> None:
    (tmp_path / "sessions").write_text("a file where the folder should be")
    told: list[str] = []
    log = ConversationLog(store_in(tmp_path), model="m", notify=told.append)
    log.save(exchange("a", "b"))
    log.save(exchange("a", "b") + exchange("c", "d"))
    assert len(told) == 1 and "not saved" in told[0]


def test_a_restored_conversation_keeps_what_fits_the_context_from_a_user_message(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    log = ConversationLog(store, model="m", notify=print)
    long = "x" * 4000
    messages: list[Message] = []
    for number in range(10):
        messages += [
            {"role": "user", "content": f"q{number} {long}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"c{number}", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{number}", "content": long},
            {"role": "assistant", "content": f"a{number}"},
        ]
    log.save(messages)
    assert log.session_id is not None
    restored = restore(store.load(log.session_id), context_tokens=8000, system_prompt="s")
    assert 0 < len(restored.messages) < len(messages) and restored.messages[0]["role"] == "user"
    assert restored.left_out == len(messages) - len(restored.messages)
    assert "do not fit the context" in restored.notices()[0]
    assert last_exchange(restored.messages) == (f"q9 {long}", "a9")


def test_sessions_live_under_the_workspace_id_of_the_checkpoints(tmp_path: Path) -> None:
    from paicli.app.checkpoints.store import store_folder

    folder = sessions_folder(tmp_path / "home", tmp_path / "ws")
    assert folder.parent == tmp_path / "home" / ".paicli" / "sessions"
    assert folder.name == store_folder(tmp_path / "home", tmp_path / "ws").name


def test_a_repository_may_lower_sessions_keep_but_not_raise_it_untrusted(tmp_path: Path) -> None:
    from paicli.config_sources import load_settings

    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".paicli").mkdir(parents=True)
    warnings: list[str] = []
    for value, kept in ((10, 10), (5000, 100)):
        (ws / ".paicli" / "config.toml").write_text(f"sessions_keep = {value}\n")
        settings = load_settings(workspace=ws, env={}, home=home, warn=warnings.append)
        assert settings.sessions_keep == kept
    assert any("sessions_keep" in warning for warning in warnings)
