"""Reading what a chat-completions server answered: a stream of server-sent events, a whole JSON
completion (a server that ignored `stream: true`), or an error body's own explanation. Used by the
client and by `paicli doctor`'s probes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator

import httpx2

from paicli.common.errors import ModelProtocolError
from paicli.common.sanitize import well_formed_json
from paicli.llm.sse import ReplyAssembler, SSEDecoder, snippet
from paicli.llm.types import ChatResponse

HTML_REPLY = "the server answered with an HTML page, not JSON — is the base URL the API root?"
DRAIN_SECONDS = 1.0  # after [DONE], how long to wait for the body's end so the connection can be reused


async def read_stream(response: httpx2.Response, assembler: ReplyAssembler) -> ChatResponse:
    events = SSEDecoder().events(response.aiter_text())
    saw_done = False
    try:
        async for data in events:
            if data.strip() == "[DONE]":
                saw_done = True
                break
            assembler.feed_json(data)
        if saw_done:
            await _drain(events)
    except httpx2.HTTPError:
        if assembler.finish_reason is None:
            raise
        # the reply was complete; only the optional usage chunk and [DONE] were lost
    finally:
        await events.aclose()
    if not saw_done and assembler.finish_reason is None:
        # A proxy or gateway that times out closes the stream as if it had ended: asked again like a dropped
        # connection (no tool of a reply runs before the whole reply arrived).
        if assembler.started:
            raise ModelProtocolError(
                "the stream ended before the reply was complete (no finish_reason, no [DONE])", retryable=True
            )
        raise ModelProtocolError("the stream ended before any content arrived", retryable=True)
    return assembler.result()


async def _drain(events: AsyncGenerator[str, None]) -> None:
    with contextlib.suppress(TimeoutError, httpx2.HTTPError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass


def whole_reply(text: str, assembler: ReplyAssembler) -> ChatResponse:
    """A non-streamed completion (or an SSE body mislabelled as JSON)."""
    if text.lstrip().startswith("data:"):
        decoder = SSEDecoder()
        for data in [*decoder.feed(text), *decoder.close()]:
            if data.strip() != "[DONE]":
                assembler.feed_json(data)
        return assembler.result()
    try:
        completion = well_formed_json(json.loads(text))
    except (ValueError, RecursionError) as error:
        what = "JSON nested too deeply to read" if isinstance(error, RecursionError) else "invalid JSON"
        raise ModelProtocolError(f"the model server answered with {what}: {snippet(text)}") from None
    if not isinstance(completion, dict):
        raise ModelProtocolError(f"the model server answered with unexpected JSON: {snippet(text)}")
    chunk = dict(completion)
    for choice in chunk.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            calls = [{"index": n, **call} for n, call in enumerate(message.get("tool_calls") or [])]
            choice["delta"] = {**message, "tool_calls": calls}
    assembler.feed(chunk)
    return assembler.result()


def server_message(response: httpx2.Response) -> str:
    """The server's own explanation: JSON `error.message` (or similar), else a short text snippet."""
    text = response.text
    content_type = response.headers.get("content-type", "").lower()
    if "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        return HTML_REPLY
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return snippet(str(error["message"]))
        for candidate in (error, data.get("message"), data.get("detail")):
            if isinstance(candidate, str) and candidate:
                return snippet(candidate)
    return snippet(text) or response.reason_phrase or "(no message)"
