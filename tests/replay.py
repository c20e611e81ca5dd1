"""Replies a real server sent, replayed byte for byte by the fake server (recordings in tests/recordings/,
see its README): a streamed body in the pieces the server wrote (one event each), or a whole HTTP reply
with its status line, headers and body."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakellm import Reply

RECORDINGS = Path(__file__).parent / "recordings"


def recording(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


def recorded_stream(name: str) -> Reply:
    """A recorded `.sse` body, sent as the server sent it: every event in its own chunk."""
    data = recording(name)
    parts = [piece for piece in re.split(rb"(?<=\n\n)", data) if piece]
    assert b"".join(parts) == data
    return Reply.raw(parts)


def recorded_http(name: str) -> Reply:
    """A recorded `.http` reply (status line, headers, blank line, body): its status, its headers (the
    fake writes Content-Length and Content-Type itself, with the recorded values) and its body as is."""
    data = recording(name)
    head, _, body = data.partition(b"\n\n")
    status_line, *header_lines = head.decode("latin-1").splitlines()
    status = int(status_line.split()[1])
    headers = dict(line.split(": ", 1) for line in header_lines)
    lowered = {name.lower(): value for name, value in headers.items()}
    assert int(lowered["content-length"]) == len(body)
    kept = tuple((k, v) for k, v in headers.items() if k.lower() not in ("content-length", "content-type"))
    return Reply(kind="error", status=status, body=body, content_type=lowered["content-type"], headers=kept)


def recorded_json(name: str) -> Reply:
    """A recorded non-streamed JSON completion, sent as is with status 200."""
    return Reply(kind="error", status=200, body=recording(name), content_type="application/json")
