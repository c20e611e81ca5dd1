"""Saved conversations: one JSON-lines file per REPL conversation or `paicli run`, under
`~/.paicli/sessions/<workspace id>/` (the id the checkpoints use), so `-c` and `/resume` can continue one.

Each line is one whole record, written with a single append (O_APPEND) and fsynced: a crash leaves at
most a torn last line. Records:
    {"kind": "start", "ts", "model"}                 the first line
    {"kind": "turn", "ts", "messages", "tokens"}     messages added to the conversation (a turn, a plan, a !command)
    {"kind": "reset", "ts", "messages", "tokens"}    the conversation replaced as a whole (compressed)
The system prompt is not saved: a continued conversation gets the current one. Secrets are masked
before anything is written, and the text is escaped like JSON-lines output (paicli/common/sanitize.py). A line
that cannot be read is skipped with a count (every record stands on its own, so what is around it stays
consistent); the next append starts on a fresh line. The newest `keep` files of a workspace are kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paicli.app.checkpoints.store import workspace_id
from paicli.common.atomic_write import write_all
from paicli.common.sanitize import json_safe, well_formed_json
from paicli.llm.types import Message
from paicli.tools.output import mask_secrets

DEFAULT_KEEP = 100
SUFFIX = ".jsonl"
_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
_TEXT_OF_SUMMARY = 200  # characters of the first message kept in a summary


def sessions_folder(home: Path, workspace: Path) -> Path:
    return home / ".paicli" / "sessions" / workspace_id(workspace)


@dataclass(frozen=True)
class SessionSummary:
    """What /resume lists of a saved conversation."""

    id: str
    modified: float  # the last write, Unix seconds
    first_message: str
    turns: int
    tokens: int


@dataclass
class LoadedSession:
    summary: SessionSummary
    messages: list[Message]  # without the system prompt
    damaged_lines: int = 0  # lines that could not be read and were skipped


@dataclass
class _Replay:
    messages: list[Message] = field(default_factory=list)
    first_message: str = ""
    turns: int = 0
    tokens: int = 0
    damaged: int = 0


class SessionStore:
    """The saved conversations of one workspace."""

    def __init__(self, folder: Path, *, keep: int = DEFAULT_KEEP, secrets: Sequence[str] = ()) -> None:
        self.folder = folder
        self.keep = keep
        self.secrets = list(secrets)

    def ids(self) -> list[str]:
        """Newest first (by last write; a session id starts with its start time, which breaks ties)."""
        try:
            names = [entry for entry in os.scandir(self.folder) if entry.name.endswith(SUFFIX)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: list[tuple[float, str]] = []
        for entry in names:
            session_id = entry.name.removesuffix(SUFFIX)
            if _ID.fullmatch(session_id) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    found.append((entry.stat(follow_symlinks=False).st_mtime, session_id))
        return [session_id for _, session_id in sorted(found, reverse=True)]

    def recent(self, limit: int) -> list[SessionSummary]:
        summaries = []
        for session_id in self.ids()[:limit]:
            with contextlib.suppress(OSError):
                summaries.append(self.load(session_id).summary)
        return summaries

    def load(self, session_id: str) -> LoadedSession:
        """OSError when the file cannot be read; damaged lines are skipped and counted."""
        path = self.path_of(session_id)
        replay = _Replay()
        with open(path, "rb") as file:
            modified = os.fstat(file.fileno()).st_mtime
            for line in file:
                if line.strip():
                    _apply(replay, line)
        summary = SessionSummary(session_id, modified, replay.first_message, replay.turns, replay.tokens)
        return LoadedSession(summary, replay.messages, replay.damaged)

    def path_of(self, session_id: str) -> Path:
        if not _ID.fullmatch(session_id):
            raise FileNotFoundError(f"no saved conversation {session_id[:40]!r}")
        return self.folder / (session_id + SUFFIX)

    def new_id(self) -> str:
        return time.strftime("%Y%m%d-%H%M%S", time.localtime()) + "-" + secrets.token_hex(3)

    def append(self, session_id: str, record: dict[str, Any]) -> None:
        """One record as one line, appended and fsynced; OSError when it cannot be written."""
        data = json_safe(json.dumps(_masked(record, self.secrets), ensure_ascii=False)).encode() + b"\n"
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(self.path_of(session_id), flags, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # after a torn line: this record starts a line of its own
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def prune(self, spare: str) -> None:
        """Removes all but the newest `keep` conversations (never `spare`, the one being written)."""
        for session_id in [s for s in self.ids() if s != spare][max(self.keep - 1, 0) :]:
            with contextlib.suppress(OSError):
                os.unlink(self.path_of(session_id))


def _apply(replay: _Replay, line: bytes) -> None:
    try:
        record = well_formed_json(json.loads(line))
        kind = record["kind"]
        messages = record.get("messages", [])
        tokens = record.get("tokens", 0)
        if kind not in ("start", "turn", "reset") or not _valid_messages(messages) or not isinstance(tokens, int):
            raise ValueError(kind)
    except (ValueError, KeyError, TypeError):  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        replay.damaged += 1
        return
    if kind == "reset":
        replay.messages = list(messages)
    elif kind == "turn":
        replay.messages.extend(messages)
        replay.turns += 1
    replay.tokens += tokens
    if not replay.first_message:
        replay.first_message = next(_user_texts(messages), "")[:_TEXT_OF_SUMMARY]


def _valid_messages(messages: Any) -> bool:
    return isinstance(messages, list) and all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant", "tool", "system") for m in messages
    )


def _user_texts(messages: Sequence[Message]) -> Iterator[str]:
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            yield content.strip()


def _masked(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, str):
        return mask_secrets(value, secrets)
    if isinstance(value, dict):
        return {key: _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, secrets) for item in value]
    return value
