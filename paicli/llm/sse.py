"""Reading a streamed chat completion: server-sent events in, one `ChatResponse` out.

`SSEDecoder` splits the text stream into event payloads. It is ours rather than httpx-sse's `EventSource`
because that one insists on a `text/event-stream` content type and drops a last event that is not followed
by a blank line; some OpenAI-compatible servers do both.

`ReplyAssembler` folds the decoded chunks into content, reasoning, tool calls, finish reason and usage.
Reasoning comes as `reasoning_content` deltas (DeepSeek, GLM, Kimi, Qwen, vLLM), `reasoning` deltas
(OpenRouter, Ollama) or inline `<think>…</think>` text (paicli/llm/think.py); it goes to `on_reasoning`,
never into the content. Tool-call
fragments are joined by `index`; a server that leaves `index` out gets the OpenAI SDKs' reading: a fragment
with an `id` opens a new call, one without continues the last. A fragment whose `id` differs from the call
already at its index also opens a new call (some servers put every call at index 0).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from paicli.common.errors import ModelProtocolError
from paicli.common.sanitize import well_formed_json
from paicli.common.values import Usage
from paicli.llm.think import ThinkSplitter, split_closing_tag
from paicli.llm.types import ChatResponse, TextCallback, ToolCall

_NEWLINE = re.compile(r"\r\n|\r|\n")


class SSEDecoder:
    """Incremental parser of the event-stream format; only `data` fields matter for chat completions."""

    def __init__(self) -> None:
        self._pending = ""
        self._data: list[str] = []

    def feed(self, text: str) -> list[str]:
        """Consume more text; return the data of every event it completes."""
        self._pending += text
        events: list[str] = []
        while match := _NEWLINE.search(self._pending):
            if match.group() == "\r" and match.end() == len(self._pending):
                break  # maybe the first half of a \r\n split across reads
            line, self._pending = self._pending[: match.start()], self._pending[match.end() :]
            self._line(line, events)
        return events

    def close(self) -> list[str]:
        """The stream ended: complete whatever was pending."""
        events: list[str] = []
        if self._pending:
            line, self._pending = self._pending.rstrip("\r"), ""
            self._line(line, events)
        self._line("", events)
        return events

    async def events(self, text: AsyncIterator[str]) -> AsyncGenerator[str, None]:
        async for piece in text:
            for data in self.feed(piece):
                yield data
        for data in self.close():
            yield data

    def _line(self, line: str, events: list[str]) -> None:
        if not line:
            if self._data:
                events.append("\n".join(self._data))
                self._data = []
            return
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value.removeprefix(" "))


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class ReplyAssembler:
    """Accumulates the chunks of one streamed reply; `on_text` receives each content delta."""

    def __init__(self, on_text: TextCallback | None = None, on_reasoning: TextCallback | None = None) -> None:
        self._on_text = on_text
        self._on_reasoning = on_reasoning
        self._think = ThinkSplitter()
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._calls: list[_PartialCall] = []
        self._position_of_index: dict[int, int] = {}
        self._saw_choice = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    @property
    def started(self) -> bool:
        """True once content, reasoning or a tool call arrived: from then on the reply cannot be silently
        retried (the user has seen part of it)."""
        return bool(self._content or self._reasoning or self._calls)

    def feed_json(self, data: str) -> None:
        try:
            chunk = well_formed_json(json.loads(data))
        except (ValueError, RecursionError) as error:
            what = "nested too deeply to read" if isinstance(error, RecursionError) else "not valid JSON"
            raise ModelProtocolError(f"the model server sent a stream chunk that is {what}: {snippet(data)}") from None
        if not isinstance(chunk, dict):
            raise ModelProtocolError(f"the model server sent a stream chunk that is not an object: {snippet(data)}")
        self.feed(chunk)

    def feed(self, chunk: dict[str, Any]) -> None:
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            raise ModelProtocolError(
                f"the model server reported an error: {snippet(str(message))}",
                retryable=not self.started,
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = read_usage(usage)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        self._saw_choice = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            message = choice.get("message")
            delta = message if isinstance(message, dict) else {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str):
            self._add_reasoning(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            thought, content = self._think.feed(content)
            self._add_reasoning(thought)
            self._add_content(content)
        for fragment in delta.get("tool_calls") or []:
            if isinstance(fragment, dict):
                self._add_fragment(fragment)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])

    def so_far(self) -> tuple[str, str, list[tuple[str, str]]]:
        """What arrived before the stream stopped (content, reasoning, each call's name and arguments), as
        it stands: what a reply that broke off cost to generate (paicli/llm/attempts.py)."""
        calls = [(call.name, call.arguments) for call in self._calls]
        return "".join(self._content), "".join(self._reasoning), calls

    def result(self) -> ChatResponse:
        thought, rest = self._think.finish()
        self._add_reasoning(thought)
        self._add_content(rest)
        reasoning, content = split_closing_tag("".join(self._content))
        reasoning = "".join(self._reasoning) + reasoning
        if not self._saw_choice and not content:
            raise ModelProtocolError("the model server answered with no choices at all (an empty reply)")
        calls = [
            ToolCall(id=call.id or f"call_{n}", name=call.name, arguments=call.arguments or "{}")
            for n, call in enumerate(self._calls, start=1)
        ]
        if self.finish_reason == "length":
            for call in calls:
                if not _is_json(call.arguments):
                    raise ModelProtocolError(
                        f"the reply hit the token limit (finish_reason: length) in the middle of a call to "
                        f"{call.name or 'a tool'}; its arguments are incomplete JSON"
                    )
        return ChatResponse(
            content=content,
            reasoning=reasoning,
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage or Usage(),
        )

    def _add_reasoning(self, text: str) -> None:
        if text:
            self._reasoning.append(text)
            if self._on_reasoning is not None:
                self._on_reasoning(text)

    def _add_content(self, text: str) -> None:
        if text:
            self._content.append(text)
            if self._on_text is not None:
                self._on_text(text)

    def _add_fragment(self, fragment: dict[str, Any]) -> None:
        call = self._call_for(fragment.get("index"), str(fragment.get("id") or ""))
        given = fragment.get("function")
        function: dict[str, Any] = given if isinstance(given, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name and name != call.name:
            call.name += name  # a name streamed in pieces; a repeated whole name is skipped above
        arguments = function.get("arguments")
        if isinstance(arguments, dict | list):
            try:
                arguments = json.dumps(arguments)
            except RecursionError:  # read from the chunk just under the limit, it cannot be written again
                raise ModelProtocolError("the model server sent tool-call arguments nested too deeply") from None
        if isinstance(arguments, str):
            call.arguments += arguments

    def _call_for(self, index: object, call_id: str) -> _PartialCall:
        if isinstance(index, int):
            position = self._position_of_index.get(index)
            if position is not None:
                existing = self._calls[position]
                if not (call_id and existing.id and call_id != existing.id):
                    return existing
            self._position_of_index[index] = len(self._calls)
            return self._open(call_id)
        if self._calls and (not call_id or call_id == self._calls[-1].id):
            return self._calls[-1]
        return self._open(call_id)

    def _open(self, call_id: str) -> _PartialCall:
        call = _PartialCall(id=call_id)
        self._calls.append(call)
        return call


def read_usage(usage: dict[str, Any]) -> Usage:
    """A `usage` object as servers send it. Cached prompt tokens come as OpenAI's
    `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens` or Kimi's `cached_tokens`."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    for alternative in ("prompt_cache_hit_tokens", "cached_tokens"):
        if not cached:
            cached = usage.get(alternative)
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(cached),
    )


def _count(value: object) -> int:
    """A token count as servers send it (int, float, numeric string); anything else counts as 0."""
    if not isinstance(value, int | float | str):
        return 0
    try:
        return max(0, int(float(value)))
    except (TypeError, ValueError, OverflowError):
        return 0


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    except RecursionError:  # complete or not, the tool box refuses it as nested too deeply, to the model
        return True
    return True


def snippet(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
