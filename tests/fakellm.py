"""A scripted OpenAI-compatible model server on 127.0.0.1, for tests.

It is a real HTTP/1.1 server (keep-alive, chunked SSE) in a background thread, so everything that talks to
it goes through real sockets: the `LLMClient`, or `paicli` itself run as a subprocess with `--base-url`.

    from tests.fakellm import FakeLLM, Reply, has_tool_result, no_tools

    with FakeLLM() as fake:                         # 127.0.0.1:<free port>; stopped on exit
        fake.on(has_tool_result("list_dir"), Reply.text("Two files."))
        fake.on("what is here", Reply.tool_calls([("list_dir", {"path": "."})]))
        fake.on(no_tools, Reply.text('{"summary": "…", "tasks": []}'), repeat=True)
        ...  # point the code under test at fake.base_url ("http://127.0.0.1:PORT/v1")
        assert [r.rule for r in fake.requests] == [1, 0]

Rules route by what a request contains, never by arrival order, so parallel requests get the right reply.
`match` is a string (found in the text of any message's content) or a predicate over the request body.
The first registered rule that matches and still has replies serves its next reply; each reply is used
once, and `repeat=True` keeps serving the last one. No rule matched → HTTP 500 "fakellm: no rule matched",
recorded like any other request, so the test fails with a clear message.

Replies (all take `latency`, seconds before the first byte; streamed ones also `chunk_delay`; any reply's
`.after(condition)` is held until `condition()` is true, then waits its latency):
    Reply.text(content, chunk=7, finish_reason="stop", usage=None)   usage: a dict to send, None to compute
                                    one, False to send none (like llama.cpp's server in a stream); a dict
                                    may carry `prompt_tokens_details: {"cached_tokens": n}` (a cache hit)
    Reply.tool_calls([(name, args), (name, args, call_id), ...], content="", chunk=5, omit_index=False,
                     finish_reason="tool_calls")  args: a dict (JSON-encoded here) or a raw string
    Both take `reasoning="…"`: streamed first as `reasoning_content` deltas (Reply.text: `reasoning_field`
    "reasoning" for the OpenRouter/Ollama spelling).
    Reply.error(status, message, headers=None, html=False)
    Reply.hang(after_chunks=None)   never finishes; None sends nothing at all, n sends headers + n content
                                    chunks (of `content`), then waits for the client or the server to quit
    Reply.drop(after_chunks=0)      sends headers + n content chunks, then closes without [DONE]
    Reply.cut(after_chunks, content=…, calls=[…], usage=None)   sends n chunks (content, then tool-call
                                    fragments), then ends the body cleanly: no finish_reason, no [DONE]
    Reply.raw([b"data: {...}\\n\\n", ...], status=200, content_type="text/event-stream")

A streamed reply starts with a role-only delta, then content pieces of `chunk` characters, then tool-call
fragments (id + name first, arguments in `chunk`-sized pieces), a finish chunk, a usage-only chunk (empty
`choices`) when the request asked for `stream_options.include_usage`, and `data: [DONE]`. Requests without
`stream: true` get one plain JSON completion. Unless `usage` is given it is computed deterministically:
prompt_tokens = len(json.dumps(messages + tools)) // 4, completion_tokens = len(content + arguments) // 4.
Tool-call ids are "call_1", "call_2", … in the order the fake sends them, unless given.
`fake.models_reply` (a Reply, e.g. a recorded one from tests/replay.py) replaces what GET /models answers.

Faults across rules (issue 18): `fake.storm(seconds, reply, match=any_request)` answers every matching
request with `reply` (say `Reply.error(429, "slow down", headers={"Retry-After": "1"})`) for `seconds` from
the first one; `fake.inject_faults(rate, replies, seed=0, match=any_request)` answers each matching request,
with probability `rate`, with one of `replies` instead of its rule's next reply (which stays for the next
request). The draw depends only on the seed, the request (`key(body)`, default the whole body) and how
often that request came before, so parallel requests get the same faults whatever order they arrive in.
Such requests are recorded with `rule` STORM (-1) or FAULT (-2).

Match helpers: any_request, has_tools, no_tools, has_tool_result(name=None), last_message_contains(text),
all_of(*matches). Inspection: `fake.requests` is a snapshot list of `RecordedRequest` (body, headers with
lower-case names, started/finished in time.monotonic(), rule index, reply, status, disconnected,
client_port, `.text` of all messages, `.wait_finished(timeout)`); `fake.wait_for_requests(n)` waits for
n of them to arrive; `fake.forget_requests()` drops the log, `fake.reset()` the rules too. A reply waiting
(latency, hang) notices a client that hung up within ~20 ms and records `disconnected=True`; stopping the
server ends every waiting reply at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import random
import select
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Body = dict[str, Any]
Match = str | Callable[[Body], bool]
Args = dict[str, Any] | str
ToolCallSpec = tuple[str, Args] | tuple[str, Args, str]

_POLL = 0.02  # how often a waiting reply checks for shutdown and client disconnects
STORM, FAULT = -1, -2  # the `rule` of a request answered by `fake.storm` or `fake.inject_faults`


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted answer. Build it with the class methods; the fields are the wire-level details."""

    kind: Literal["completion", "error", "hang", "drop", "cut", "raw"]
    content: str = ""
    reasoning: str = ""  # streamed before the content, in `reasoning_field` deltas
    reasoning_field: str = "reasoning_content"
    calls: tuple[tuple[str, str, str | None], ...] = ()  # (name, arguments text, id or None)
    finish_reason: str | None = "stop"
    usage: dict[str, Any] | Literal[False] | None = None  # False: never sent (like llama.cpp's stream)
    chunk: int = 7
    omit_index: bool = False
    after_chunks: int | None = None
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    content_type: str = "text/event-stream"
    raw_parts: tuple[bytes, ...] = ()
    latency: float = 0.0
    chunk_delay: float = 0.0
    held_until: Callable[[], bool] | None = field(default=None, compare=False)  # see `after`

    def after(self, condition: Callable[[], bool]) -> Reply:
        """This reply, held (before its latency) until `condition()` is true, polled every ~20 ms in the
        handler's thread: a test orders one client's reply after what another client did."""
        return dataclasses.replace(self, held_until=condition)

    @classmethod
    def text(
        cls,
        content: str,
        *,
        chunk: int = 7,
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        finish_reason: str | None = "stop",
        usage: dict[str, Any] | Literal[False] | None = None,
        reasoning: str = "",
        reasoning_field: str = "reasoning_content",
    ) -> Reply:
        return cls(
            kind="completion",
            content=content,
            reasoning=reasoning,
            reasoning_field=reasoning_field,
            chunk=chunk,
            latency=latency,
            chunk_delay=chunk_delay,
            finish_reason=finish_reason,
            usage=usage,
        )

    @classmethod
    def tool_calls(
        cls,
        calls: Sequence[ToolCallSpec],
        *,
        content: str = "",
        chunk: int = 5,
        omit_index: bool = False,
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        finish_reason: str | None = "tool_calls",
        usage: dict[str, Any] | Literal[False] | None = None,
        reasoning: str = "",
    ) -> Reply:
        specs = []
        for spec in calls:
            name, args = spec[0], spec[1]
            call_id = spec[2] if len(spec) == 3 else None
            specs.append((name, args if isinstance(args, str) else json.dumps(args), call_id))
        return cls(
            kind="completion",
            content=content,
            reasoning=reasoning,
            calls=tuple(specs),
            chunk=chunk,
            omit_index=omit_index,
            latency=latency,
            chunk_delay=chunk_delay,
            finish_reason=finish_reason,
            usage=usage,
        )

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        html: bool = False,
        latency: float = 0.0,
    ) -> Reply:
        if html:
            title = f"<head><title>{status}</title></head>"
            body = f"<!DOCTYPE html><html>{title}<body><h1>{message}</h1></body></html>"
            content_type = "text/html; charset=utf-8"
        else:
            body = json.dumps({"error": {"message": message, "type": "fakellm_error", "code": status}})
            content_type = "application/json"
        return cls(
            kind="error",
            status=status,
            body=body.encode(),
            content_type=content_type,
            headers=tuple((headers or {}).items()),
            latency=latency,
        )

    @classmethod
    def hang(
        cls,
        after_chunks: int | None = None,
        *,
        content: str = "an answer that never ends",
        chunk: int = 7,
        latency: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> Reply:
        return cls(
            kind="hang",
            after_chunks=after_chunks,
            content=content,
            chunk=chunk,
            latency=latency,
            chunk_delay=chunk_delay,
        )

    @classmethod
    def drop(
        cls,
        after_chunks: int = 0,
        *,
        content: str = "an answer that is cut off",
        chunk: int = 7,
        latency: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> Reply:
        return cls(
            kind="drop",
            after_chunks=after_chunks,
            content=content,
            chunk=chunk,
            latency=latency,
            chunk_delay=chunk_delay,
        )

    @classmethod
    def cut(
        cls,
        after_chunks: int,
        *,
        content: str = "an answer that ends early",
        calls: Sequence[ToolCallSpec] = (),
        chunk: int = 7,
        usage: dict[str, Any] | None = None,
    ) -> Reply:
        """Streams n chunks of a reply (its content pieces, then its tool-call fragments), then ends the body
        cleanly: no finish_reason, no [DONE], the chunked encoding properly closed (a proxy's time-out).
        `usage`: a usage chunk sent just before the end."""
        specs = tuple((spec[0], spec[1] if isinstance(spec[1], str) else json.dumps(spec[1]), None) for spec in calls)
        return cls(
            kind="cut", after_chunks=after_chunks, content=content, calls=specs, chunk=chunk, usage=usage or False
        )

    @classmethod
    def models(cls, *names: str) -> Reply:
        """What GET /models answers (set it as `fake.models_reply`): the OpenAI model list of `names`."""
        body = json.dumps({"object": "list", "data": [{"id": name, "object": "model"} for name in names]})
        return cls(kind="error", status=200, body=body.encode(), content_type="application/json")  # a whole body

    @classmethod
    def raw(
        cls,
        parts: Iterable[bytes],
        *,
        status: int = 200,
        content_type: str = "text/event-stream",
        latency: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> Reply:
        return cls(
            kind="raw",
            raw_parts=tuple(parts),
            status=status,
            content_type=content_type,
            latency=latency,
            chunk_delay=chunk_delay,
        )


# ---- match helpers -------------------------------------------------------------------------------------


def message_text(message: dict[str, Any]) -> str:
    """The text of one message's content (a string, or the text parts of a content list)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def any_request(body: Body) -> bool:
    return True


def has_tools(body: Body) -> bool:
    return bool(body.get("tools"))


def no_tools(body: Body) -> bool:
    return not body.get("tools")


def has_tool_result(name: str | None = None) -> Callable[[Body], bool]:
    """Matches a request carrying a `role: tool` message (for a call to `name`, if given)."""

    def predicate(body: Body) -> bool:
        messages = body.get("messages", [])
        ids = {
            call.get("id")
            for message in messages
            for call in message.get("tool_calls") or []
            if name is None or call.get("function", {}).get("name") == name
        }
        return any(
            m.get("role") == "tool" and (m.get("tool_call_id") in ids or (name and m.get("name") == name))
            for m in messages
        )

    return predicate


def last_message_contains(text: str) -> Callable[[Body], bool]:
    def predicate(body: Body) -> bool:
        messages = body.get("messages") or [{}]
        return text in message_text(messages[-1])

    return predicate


def all_of(*matches: Match) -> Callable[[Body], bool]:
    return lambda body: all(_matches(m, body) for m in matches)


def _matches(match: Match, body: Body) -> bool:
    if isinstance(match, str):
        return any(match in message_text(m) for m in body.get("messages", []))
    return bool(match(body))


# ---- rules and the request log -------------------------------------------------------------------------


@dataclass
class Rule:
    match: Match
    replies: list[Reply]
    repeat: bool = False
    served: int = 0

    def take(self) -> Reply | None:
        if self.served < len(self.replies):
            reply = self.replies[self.served]
        elif self.repeat and self.replies:
            reply = self.replies[-1]
        else:
            return None
        self.served += 1
        return reply


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Body | None
    started: float  # time.monotonic()
    finished: float | None = None
    rule: int | None = None  # index of the rule that served it (order of `fake.on` calls)
    reply: Reply | None = None
    status: int | None = None
    disconnected: bool = False  # the client went away before the reply was complete
    client_port: int = 0  # the same port on two requests means the connection was reused
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))

    @property
    def text(self) -> str:
        return "\n".join(message_text(m) for m in self.messages)

    def wait_finished(self, timeout: float = 5.0) -> bool:
        return self.done.wait(timeout)


# ---- the server ----------------------------------------------------------------------------------------


class FakeLLM:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls  # a server context: the fake speaks HTTPS (its base URL says https)
        self._rules: list[Rule] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._call_counter = 0
        self._storm: tuple[float, Reply, Match] | None = None  # (seconds, reply, match) until it starts
        self._storm_until: float | None = None
        self._faults: tuple[float, tuple[Reply, ...], int, Match, Callable[[Body], str]] | None = None
        self._bodies_seen: dict[str, int] = {}
        self.models_reply: Reply | None = None  # what GET /models answers (default: one "fake-model")

    # lifecycle

    def start(self) -> FakeLLM:
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        if self.tls is not None:  # a client whose handshake fails is dropped at accept (an OSError there)
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeLLM is not started"
        host, port = self._server.server_address[:2]
        return f"{'https' if self.tls is not None else 'http'}://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # scripting and inspection

    def on(self, match: Match, *replies: Reply, repeat: bool = False) -> Rule:
        rule = Rule(match, list(replies), repeat)
        with self._lock:
            self._rules.append(rule)
        return rule

    def storm(self, seconds: float, reply: Reply, match: Match = any_request) -> None:
        """From the first matching request on, for `seconds`, every matching request gets `reply`."""
        with self._lock:
            self._storm, self._storm_until = (seconds, reply, match), None

    def inject_faults(
        self,
        rate: float,
        replies: Sequence[Reply],
        *,
        seed: int = 0,
        match: Match = any_request,
        key: Callable[[Body], str] = lambda body: json.dumps(body, sort_keys=True),
    ) -> None:
        """Each matching request gets one of `replies` with probability `rate` (seeded), its rule's otherwise."""
        with self._lock:
            self._faults = (rate, tuple(replies), seed, match, key)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def forget_requests(self) -> None:
        """Drops the log of requests so far: a long benchmark session keeps the server's memory flat."""
        with self._lock:
            self._requests.clear()

    def reset(self) -> None:
        """No rules and no requests: the same server (the same base URL) scripted afresh."""
        with self._lock:
            self._rules = []
            self._requests = []
            self._call_counter = 0

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(_POLL)
        return self.requests

    # used by the handler thread

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _choose(self, body: Body) -> tuple[int, Reply] | None:
        with self._lock:
            if self._storm is not None and _matches(self._storm[2], body):
                seconds, reply, _ = self._storm
                now = time.monotonic()
                if self._storm_until is None:
                    self._storm_until = now + seconds
                if now < self._storm_until:
                    return STORM, reply
            if self._faults is not None and _matches(self._faults[3], body):
                rate, replies, seed, _, key = self._faults
                digest = hashlib.sha256(key(body).encode()).hexdigest()
                seen = self._bodies_seen[digest] = self._bodies_seen.get(digest, 0) + 1
                chance = random.Random(f"{seed}:{digest}:{seen}")
                if chance.random() < rate:
                    return FAULT, chance.choice(replies)
            for index, rule in enumerate(self._rules):
                if _matches(rule.match, body):
                    reply = rule.take()
                    if reply is not None:
                        return index, reply
        return None

    def _next_call_id(self) -> str:
        with self._lock:
            self._call_counter += 1
            return f"call_{self._call_counter}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 64
    fake: FakeLLM

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client hanging up is not worth a traceback
            super().handle_error(request, client_address)


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delay between chunks
        with self.server.fake._lock:
            self.server.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.fake._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        models = self.server.fake.models_reply
        if self.path.rstrip("/").endswith("/models") and models is not None:
            self._send(models.status, models.body, models.content_type, dict(models.headers))
        elif self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"fakellm: unknown path {self.path}"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        record = RecordedRequest(
            "POST",
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            body if isinstance(body, dict) else None,
            time.monotonic(),
            client_port=self.client_address[1],
        )
        fake._record(record)
        try:
            self._serve(record)
        except (_ClientGone, ConnectionError, TimeoutError, OSError):
            record.disconnected = not fake._stopping.is_set()
            self.close_connection = True
        finally:
            record.finished = time.monotonic()
            record.done.set()

    # serving

    def _serve(self, record: RecordedRequest) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._fail(record, 404, f"fakellm: unknown path {self.path}")
        if record.body is None:
            return self._fail(record, 400, "fakellm: the request body is not a JSON object")
        try:
            chosen = self.server.fake._choose(record.body)
        except Exception as exc:
            return self._fail(record, 500, f"fakellm: a rule's match raised {exc!r}")
        if chosen is None:
            return self._fail(record, 500, "fakellm: no rule matched")
        record.rule, reply = chosen
        record.reply = reply
        record.status = reply.status
        while reply.held_until is not None and not reply.held_until():
            self._wait(_POLL)
        self._wait(reply.latency)
        if reply.kind == "error":
            self._send(reply.status, reply.body, reply.content_type, dict(reply.headers))
        elif reply.kind == "raw":
            self._stream(reply.status, reply.content_type, reply.raw_parts, reply.chunk_delay, finish=True)
        elif reply.kind == "hang" and reply.after_chunks is None:
            self._hang()
        elif not record.body.get("stream"):
            if reply.kind == "completion":
                self._send_json(200, self._completion(reply, record.body))
            else:  # a non-streamed drop or a hang after chunks: nothing useful can be sent
                self.close_connection = True
                if reply.kind == "hang":
                    self._hang()
        else:
            frames = self._frames(reply, record.body)
            if reply.kind == "completion":
                self._stream(200, "text/event-stream", frames, reply.chunk_delay, finish=True)
            elif reply.kind == "cut":
                sent = frames[: 1 + (reply.after_chunks or 0)]
                if reply.usage:
                    sent.append(_sse({"id": "chatcmpl-fake", "choices": [], "usage": _usage(reply, record.body)}))
                self._stream(200, "text/event-stream", sent, reply.chunk_delay, finish=True)
            else:
                count = 1 + (reply.after_chunks or 0)  # the role-only opening frame is not counted
                self._stream(200, "text/event-stream", frames[:count], reply.chunk_delay, finish=False)
                self.close_connection = True
                if reply.kind == "hang":
                    self._hang()

    def _fail(self, record: RecordedRequest, status: int, message: str) -> None:
        record.status = status
        self._send_json(status, {"error": {"message": message, "type": "fakellm_error"}})

    def _frames(self, reply: Reply, body: Body) -> list[bytes]:
        envelope = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model", "fake-model"),
        }

        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({**envelope, "choices": [choice]})

        frames = [frame({"role": "assistant", "content": ""})]
        frames += [frame({reply.reasoning_field: piece}) for piece in _pieces(reply.reasoning, reply.chunk)]
        frames += [frame({"content": piece}) for piece in _pieces(reply.content, reply.chunk)]
        for index, (name, arguments, call_id) in enumerate(reply.calls):
            where = {} if reply.omit_index else {"index": index}
            opening = {
                **where,
                "id": call_id or self.server.fake._next_call_id(),
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            frames.append(frame({"tool_calls": [opening]}))
            for piece in _pieces(arguments, reply.chunk):
                frames.append(frame({"tool_calls": [{**where, "function": {"arguments": piece}}]}))
        if reply.kind == "completion":
            frames.append(frame({}, reply.finish_reason))
            if reply.usage is not False and (body.get("stream_options") or {}).get("include_usage"):
                frames.append(_sse({**envelope, "choices": [], "usage": _usage(reply, body)}))
            frames.append(b"data: [DONE]\n\n")
        return frames

    def _completion(self, reply: Reply, body: Body) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.reasoning:
            message[reply.reasoning_field] = reply.reasoning
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call_id or self.server.fake._next_call_id(),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for name, arguments, call_id in reply.calls
            ]
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        }
        if reply.usage is not False:
            completion["usage"] = _usage(reply, body)
        return completion

    # wire helpers

    def _send_json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", {})

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, status: int, content_type: str, parts: Sequence[bytes], delay: float, *, finish: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for number, part in enumerate(parts):
            if number and delay:
                self._wait(delay)
            if part:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        if finish:
            self.wfile.write(b"0\r\n\r\n")

    def _wait(self, seconds: float) -> None:
        """Sleep, but give up (raise _ClientGone) when the server stops or the client disconnects."""
        deadline = time.monotonic() + seconds
        while True:
            if self.server.fake._stopping.is_set() or self._client_gone():
                raise _ClientGone
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            time.sleep(min(_POLL, remaining))

    def _hang(self) -> None:
        self._wait(float("inf"))

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


def _sse(payload: dict[str, Any]) -> bytes:
    # a lone surrogate in a reply goes out as the JSON escape `\ud800`, as a real server would send it
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8", "backslashreplace") + b"\n\n"


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage(reply: Reply, body: Body) -> dict[str, Any]:
    if reply.usage:
        usage = dict(reply.usage)
    else:
        prompt = len(json.dumps(list(body.get("messages", [])) + list(body.get("tools") or []))) // 4
        completion = len(reply.content + "".join(arguments for _, arguments, _ in reply.calls)) // 4
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
    return usage
