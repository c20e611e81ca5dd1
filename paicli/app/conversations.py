"""The conversation being saved as it goes, and what a continued one brings back (both front ends).

`ConversationLog.save` is called after anything that may have changed the conversation: it appends what
was added, or the whole conversation when it was replaced (compressed), to the session file of
paicli/app/sessions.py. The file is created with the first thing worth saving, so a REPL opened and
closed leaves none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paicli.agent.compress import TRIGGER, estimate_tokens
from paicli.app.sessions import LoadedSession, SessionStore, sessions_folder
from paicli.config import Settings
from paicli.llm.types import Message

Notify = Callable[[str], None]


def session_store(settings: Settings, home: Path, secrets: list[str]) -> SessionStore:
    return SessionStore(sessions_folder(home, settings.workspace), keep=settings.sessions_keep, secrets=secrets)


class ConversationLog:
    def __init__(self, store: SessionStore, *, model: str, notify: Notify) -> None:
        self.store = store
        self.model = model
        self.notify = notify
        self.session_id: str | None = None
        self._saved: list[Message] = []
        self._tokens_saved = 0  # the usage total counted in the file so far
        self._broken = False  # a write failed: said once, not tried again

    def start_new(self, usage_total: int = 0) -> None:
        """The next save starts a new session file."""
        self.session_id, self._saved, self._tokens_saved = None, [], usage_total

    def continue_in(self, session_id: str, messages: list[Message], usage_total: int = 0) -> None:
        """Later saves append to `session_id`, whose conversation is now `messages` (system prompt aside)."""
        self.session_id, self._saved, self._tokens_saved = session_id, _without_system(messages), usage_total

    def save(self, messages: list[Message], usage_total: int = 0) -> None:
        """Saves what changed since the last save; `usage_total` is the session's token count so far."""
        body = _without_system(messages)
        if self._broken or body == self._saved:
            return
        saved = len(self._saved)
        grew = body[:saved] == self._saved
        record = {
            "kind": "turn" if grew else "reset",
            "ts": round(time.time(), 3),
            "messages": body[saved:] if grew else body,
            "tokens": max(usage_total - self._tokens_saved, 0),
        }
        try:
            if self.session_id is None:
                session_id = self.store.new_id()
                self.store.append(session_id, {"kind": "start", "ts": record["ts"], "model": self.model})
                self.session_id = session_id
                self.store.prune(spare=session_id)
            self.store.append(self.session_id, record)
        except (OSError, ValueError, TypeError) as err:  # a full disk, no home; a message JSON cannot hold
            self._broken = True
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            self.notify(f"this conversation is not saved: {reason} ({self.store.folder})")
            return
        self._saved, self._tokens_saved = body, usage_total


def _without_system(messages: list[Message]) -> list[Message]:
    start = 0
    while start < len(messages) and messages[start].get("role") == "system":
        start += 1
    return list(messages[start:])


@dataclass(frozen=True)
class Restored:
    """A saved conversation brought back: the messages that fit the context, and what to tell the user."""

    session: LoadedSession
    messages: list[Message]
    left_out: int  # earlier messages that did not fit

    def notices(self) -> list[str]:
        notes = []
        if self.session.damaged_lines:
            count = self.session.damaged_lines
            notes.append(
                f"the saved conversation {self.session.summary.id} has {count} damaged line{'s' * (count != 1)}:"
                " loaded what could be read"
            )
        if self.left_out:
            notes.append(f"{self.left_out} earlier messages do not fit the context and were left out")
        return notes


def restore(session: LoadedSession, context_tokens: int, system_prompt: str) -> Restored:
    """The latest messages that fit under the point where compression starts, cut at a user message so
    that no tool result is parted from its call; the next turns compress as usual."""
    messages = session.messages
    room = int(context_tokens * TRIGGER) - len(system_prompt) // 4
    starts = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    first = 0
    if estimate_tokens(messages) > room and starts:
        first = next((i for i in starts if estimate_tokens(messages[i:]) <= room), starts[-1])
    return Restored(session, messages[first:], first)


def last_exchange(messages: list[Message]) -> tuple[str, str] | None:
    """The last user message and the answer that followed it (its last text), if any."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            answers = [
                m["content"]
                for m in messages[index + 1 :]
                if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"].strip()
            ]
            return message["content"], answers[-1] if answers else ""
    return None


def latest_session(store: SessionStore) -> LoadedSession | None:
    """The most recent conversation of the workspace that can be read, or None."""
    for session_id in store.ids():
        try:
            return store.load(session_id)
        except OSError:
            continue
    return None
