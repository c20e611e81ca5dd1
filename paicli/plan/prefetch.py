"""Early first requests of writers (early start, issue 33): a writer's, command's or verification's first
model request is sent while the plan still streams, and its reply is kept until the scheduler runs the
task after `plan_approved`.

The request is built by the task's own ReAct loop (paicli/plan/executor.py), run early with a model that
sends the first request, files it under the request's exact bytes (messages, tools, model and the other
options, without the streaming callbacks) and never answers the loop: the early loop is cancelled as soon
as the request is out, so no tool call of it can run. When the validated, approved plan runs the task, the
scheduler's loop asks through `PrefetchedModel`: a request with the same bytes (the same goal, spec and
dependency results) takes the kept reply, once; any other is sent as usual. Nothing is written and nothing
runs before the plan is approved; every guard of a task started by the scheduler (scope, overlap order,
checkpoints, approvals) holds because the scheduler starts it. A kept reply nobody asked for (the plan
changed the task, or the run ended) is discarded: its request was counted where it was sent (the early
meter, so in `plan_finished.requests` and the budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Unpack

from paicli.llm.capabilities import Capabilities
from paicli.llm.types import ChatModel, ChatOptions, ChatResponse, Message

CALLBACKS = ("on_text", "on_reasoning", "on_restart", "on_spent")  # not sent: a new closure each call


def request_key(messages: list[Message], options: ChatOptions) -> str:
    """A request's bytes as far as the model is concerned: what a kept reply must match."""
    sent = {key: value for key, value in options.items() if key not in CALLBACKS}
    return json.dumps([messages, sent], sort_keys=True, ensure_ascii=False, default=repr)


class Prefetched:
    """The kept replies, by request bytes; each is taken once."""

    def __init__(self) -> None:
        self._replies: dict[str, asyncio.Future[ChatResponse]] = {}
        self.sent = 0  # early first requests sent
        self.used = 0  # taken by a task the scheduler ran

    def keep(self, key: str, reply: asyncio.Future[ChatResponse]) -> None:
        old = self._replies.pop(key, None)
        if old is not None:
            _drop(old)
        self._replies[key] = reply
        self.sent += 1

    def take(self, key: str) -> asyncio.Future[ChatResponse] | None:
        reply = self._replies.pop(key, None)
        if reply is not None:
            self.used += 1
        return reply

    def __contains__(self, key: str) -> bool:
        return key in self._replies

    async def discard(self) -> None:
        """Cancels the replies still coming and forgets the rest (the run ended)."""
        replies, self._replies = list(self._replies.values()), {}
        for reply in replies:
            _drop(reply)
        await asyncio.gather(*replies, return_exceptions=True)


class SendFirst:
    """The model of an early loop: sends its first request (callbacks left out) and keeps the reply, then
    ends the loop as a cancel would, so the loop never has a reply and can call no tool."""

    def __init__(self, inner: ChatModel, kept: Prefetched) -> None:
        self.inner = inner
        self.kept = kept

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    async def chat(self, messages: list[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        key = request_key(messages, options)
        if key not in self.kept:
            quiet: Any = {name: value for name, value in options.items() if name not in CALLBACKS}
            reply = asyncio.ensure_future(self.inner.chat(list(messages), **quiet))
            reply.add_done_callback(_retrieved)
            self.kept.keep(key, reply)
        raise asyncio.CancelledError  # the early loop ends here: the scheduler's loop takes the reply


class PrefetchedModel:
    """The scheduler's model when early start is on: a request whose bytes were sent early takes its reply."""

    def __init__(self, inner: ChatModel, kept: Prefetched) -> None:
        self.inner = inner
        self.kept = kept

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    async def chat(self, messages: list[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        reply = self.kept.take(request_key(messages, options))
        if reply is not None:
            try:
                return await asyncio.shield(reply)
            except asyncio.CancelledError:
                if not reply.cancelled():
                    raise  # this loop was cancelled, not the early request
            except Exception:  # the early request failed: the task asks as it would have
                pass
        return await self.inner.chat(messages, **options)


def _drop(reply: asyncio.Future[ChatResponse]) -> None:
    if not reply.done():
        reply.cancel()


def _retrieved(reply: asyncio.Future[ChatResponse]) -> None:
    """A discarded reply's failure is seen, so asyncio does not log it as never retrieved."""
    if not reply.cancelled():
        with contextlib.suppress(Exception):
            reply.exception()
