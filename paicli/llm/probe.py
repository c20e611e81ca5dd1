"""`paicli doctor`'s probes: a handful of tiny requests that find out what an endpoint and model can do.

Each check has a name, `ok` (True: works, False: does not, None: does not apply or was not probed) and
a one-line detail. The checks here: `chat` (reachable and authenticated), `models` (the model listed,
its context size if the server says), `streaming` (with the latency to the first token),
`usage_in_stream`, `tool_calls`, `parallel_tool_calls`, `json_schema`, `json_object` and `reasoning`.
What a probe finds refused or accepted is written to the client's `Capabilities` (and so remembered).
The requests go out as the client's do (its headers, no key when there is none); details never hold
the key.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx2

from paicli import __version__
from paicli.common.errors import ModelError
from paicli.llm.capabilities import Capabilities
from paicli.llm.images import CAPABILITY as VISION
from paicli.llm.images import image_part, text_part
from paicli.llm.reasoning import rule_for
from paicli.llm.rejections import rejected_field
from paicli.llm.replies import read_stream, server_message, whole_reply
from paicli.llm.sse import ReplyAssembler, snippet
from paicli.llm.tls import not_trusted, untrusted_certificate
from paicli.llm.types import ChatResponse

ADD_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers and return the sum.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": False,
        },
    },
}
CONTEXT_KEYS = ("context_length", "context_window", "max_context_length", "max_model_len", "n_ctx", "n_ctx_train")
MAX_TOKENS = 200  # enough for a short answer; a reasoning model may spend it thinking, which still shows


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"  # 1×1 red PNG


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class Answer:
    """What one probe request got back."""

    status: int  # 0: no HTTP answer at all
    error: str = ""
    rejected: str | None = None  # the capability an error reply refused (paicli/llm/rejections.py)
    response: ChatResponse | None = None
    streamed: bool = False
    usage_reported: bool = False
    first_token: float | None = None  # seconds from sending to the first content, reasoning or call
    elapsed: float = 0.0


class Prober:
    def __init__(
        self,
        http: httpx2.AsyncClient,
        *,
        base_url: str,
        api_key: str,
        model: str,
        capabilities: Capabilities,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.capabilities = capabilities.for_model(model)
        self._key = api_key
        self._headers = {**(headers or {}), "User-Agent": f"paicli/{__version__}"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._reasoning_seen = False

    async def run(self) -> list[Check]:
        chat = await self.chat()
        models = await self.models()
        if chat.ok is not True:
            rest = (
                "streaming",
                "usage_in_stream",
                "tool_calls",
                "parallel_tool_calls",
                "json_schema",
                "json_object",
                "reasoning",
                "vision",
            )
            return [chat, models, *(Check(name, None, "not probed: chat does not work") for name in rest)]
        streaming, usage = await self.streaming()
        tools, parallel = await self.tool_calls()
        schema = await self.structured("json_schema", ANSWER_SCHEMA)
        json_object = await self.structured("json_object", {"type": "json_object"})
        vision = await self.vision()
        return [chat, models, streaming, usage, tools, parallel, schema, json_object, self.reasoning(), vision]

    # ---- the checks ----------------------------------------------------------------------------------

    async def chat(self) -> Check:
        answer = await self._ask("Reply with the single word OK.", stream=False)
        if answer.response is None:
            return Check("chat", False, self._failure(answer))
        said = snippet(answer.response.content or answer.response.reasoning, 60) or "(an empty reply)"
        return Check("chat", True, f"HTTP {answer.status} in {answer.elapsed:.1f} s: {said!r}")

    async def models(self) -> Check:
        try:
            reply = await self.http.get(f"{self.base_url}/models", headers=self._headers)
        except httpx2.HTTPError as exc:
            return Check("models", None, self._safe(f"GET /models failed ({unreached(exc)})"))
        if reply.status_code >= 400:
            return Check("models", None, self._safe(f"GET /models: HTTP {reply.status_code}: {server_message(reply)}"))
        try:
            entries = [e for e in reply.json().get("data") or [] if isinstance(e, dict)]
        except (ValueError, AttributeError):
            return Check("models", None, "GET /models did not answer with a model list")
        names = [str(entry.get("id", "")) for entry in entries]
        mine = next((entry for entry in entries if entry.get("id") == self.model), None)
        if mine is not None:
            context = _context_size(mine)
            size = f"; context {context:,} tokens" if context else ""
            return Check("models", True, f"{self.model} is listed{size}")
        listed = self._safe(", ".join(snippet(name, 80) for name in names[:5]) or "nothing")
        if len(names) == 1:
            return Check(
                "models",
                None,
                f"{self.model} is not listed; the server lists only {listed} "
                "(a server with one model may answer to any name)",
            )
        return Check("models", False, f"{self.model} is not listed; the server lists {listed}")

    async def streaming(self) -> tuple[Check, Check]:
        answer = await self._ask("Count from 1 to 5.", stream=True, usage=True)
        if answer.response is None:
            failure = self._failure(answer)
            return Check("streaming", False, failure), Check("usage_in_stream", None, "not probed: " + failure)
        if not answer.streamed:
            return (
                Check("streaming", False, "the server ignored stream: true and sent one JSON reply"),
                Check("usage_in_stream", None, "not probed: no stream"),
            )
        first = f"first token after {answer.first_token:.2f} s" if answer.first_token is not None else "no tokens"
        streaming = Check("streaming", True, first)
        if not self.capabilities.accepts("stream_options"):
            return streaming, Check("usage_in_stream", False, "stream_options is rejected; paicli estimates usage (~)")
        if answer.usage_reported:
            return streaming, Check("usage_in_stream", True, "a usage chunk ends the stream")
        return streaming, Check(
            "usage_in_stream", False, "no usage in the stream although asked for; paicli estimates usage (~)"
        )

    async def tool_calls(self) -> tuple[Check, Check]:
        answer = await self._ask("Use the add tool to add 2 and 3. Call the tool; do not answer in text.", tools=True)
        if answer.response is None:
            failure = self._failure(answer)
            return Check("tool_calls", False, failure), Check("parallel_tool_calls", None, "not probed: no tool calls")
        calls = [call for call in answer.response.tool_calls if call.name == "add" and _is_object(call.arguments)]
        if not calls:
            said = snippet(answer.response.content, 60)
            return (
                Check(
                    "tool_calls",
                    False,
                    f"no call to the tool; the model answered in text: {said!r} (llama.cpp "
                    "needs a tool-calling chat template, vLLM --enable-auto-tool-choice)",
                ),
                Check("parallel_tool_calls", None, "not probed: no tool calls"),
            )
        tools = Check("tool_calls", True, f"add({snippet(calls[0].arguments, 60)})")
        answer = await self._ask(
            "Call the add tool twice in this one reply: once to add 1 and 2, once to add 3 and 4.", tools=True
        )
        count = len(answer.response.tool_calls) if answer.response is not None else 0
        if count >= 2:
            return tools, Check("parallel_tool_calls", True, f"{count} calls in one reply")
        return tools, Check("parallel_tool_calls", False, "one call per reply: tasks still work, one step a call")

    async def structured(self, kind: str, response_format: dict[str, Any]) -> Check:
        answer = await self._ask('Reply with a JSON object whose field "answer" is "yes".', format=response_format)
        if answer.response is None:
            return Check(kind, False, self._failure(answer))
        if not _is_object(_unfenced(answer.response.content)):
            said = snippet(answer.response.content, 80)
            return Check(kind, False, f"accepted, but the reply is not a JSON object: {said!r}")
        self.capabilities.allow(f"response_format.{kind}")
        return Check(kind, True, f"a JSON object: {snippet(answer.response.content, 60)}")

    async def vision(self) -> Check:
        """Whether the model takes an image part (remembered, so the REPL knows before sending one)."""
        answer = await self._ask("What colour is this one-pixel image? One word.", image=True)
        if answer.response is None:
            if answer.rejected == VISION:
                return Check("vision", False, "the model takes no images: attached ones are left out")
            return Check("vision", False, self._failure(answer))
        self.capabilities.allow(VISION)
        return Check("vision", True, f"an image was taken: {snippet(answer.response.content, 40)!r}")

    def reasoning(self) -> Check:
        if not self._reasoning_seen:
            return Check("reasoning", None, "no reasoning seen (not a reasoning model, or its thinking is hidden)")
        rule = rule_for(
            self.model,
            required=not self.capabilities.accepts("reasoning.required"),
            refused=not self.capabilities.accepts("reasoning.refused"),
        )
        return Check("reasoning", True, f"the model shows its thinking; sent back: {rule.value}")

    # ---- one request ---------------------------------------------------------------------------------

    async def _ask(
        self,
        prompt: str,
        *,
        stream: bool = True,
        usage: bool = False,
        tools: bool = False,
        format: dict[str, Any] | None = None,
        image: bool = False,
    ) -> Answer:
        """One tiny request; a refused field the probe added itself is dropped and the request sent again."""
        for _ in range(3):
            content: Any = [text_part(prompt), image_part(base64.b64decode(PIXEL), "image/png")] if image else prompt
            messages = [{"role": "user", "content": content}]
            body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": stream}
            body["max_tokens" if self.capabilities.accepts("max_tokens") else "max_completion_tokens"] = MAX_TOKENS
            if stream and usage and self.capabilities.accepts("stream_options"):
                body["stream_options"] = {"include_usage": True}
            if tools:
                body["tools"] = [ADD_TOOL]
            if format is not None:
                body["response_format"] = format
            answer = await self._send(body)
            if answer.rejected is not None:
                self.capabilities.reject(answer.rejected)
            if answer.rejected not in ("max_tokens", "stream_options"):
                return answer
        return answer

    async def _send(self, body: dict[str, Any]) -> Answer:
        started = time.monotonic()
        first: list[float] = []

        def mark(_: str) -> None:
            if not first:
                first.append(time.monotonic() - started)

        assembler = ReplyAssembler(mark, mark)
        try:
            async with self.http.stream(
                "POST", f"{self.base_url}/chat/completions", json=body, headers=self._headers
            ) as reply:
                if reply.status_code >= 400:
                    await reply.aread()
                    message = server_message(reply)
                    return Answer(reply.status_code, message, rejected_field(reply.status_code, message, body))
                streamed = "json" not in reply.headers.get("content-type", "").lower()
                if streamed:
                    response = await read_stream(reply, assembler)
                else:
                    await reply.aread()
                    response = whole_reply(reply.text, assembler)
        except httpx2.HTTPError as exc:
            return Answer(0, f"could not reach {self.base_url} ({unreached(exc)})")
        except ModelError as exc:
            return Answer(200, str(exc))
        if response.tool_calls and not first:
            mark("")
        self._reasoning_seen = self._reasoning_seen or bool(response.reasoning)
        return Answer(
            reply.status_code,
            response=response,
            streamed=streamed,
            usage_reported=assembler.usage is not None,
            first_token=first[0] if first else None,
            elapsed=time.monotonic() - started,
        )

    def _failure(self, answer: Answer) -> str:
        if answer.status == 0:
            return self._safe(answer.error)
        hint = " — the server rejected the API key" if answer.status == 401 else ""
        return self._safe(f"HTTP {answer.status}: {answer.error}{hint}")

    def _safe(self, text: str) -> str:
        return text.replace(self._key, "***") if len(self._key) >= 4 else text


def _context_size(entry: dict[str, Any]) -> int | None:
    for where in (entry, entry.get("meta"), entry.get("details")):
        if isinstance(where, dict):
            for key in CONTEXT_KEYS:
                value = where.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def _unfenced(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[-1].rsplit("```", 1)[0]
    return stripped


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def unreached(error: httpx2.HTTPError) -> str:
    """Why a request did not get through, in a few words; an untrusted certificate says how to trust it."""
    reason = untrusted_certificate(error)
    return not_trusted(reason) if reason is not None else str(error) or type(error).__name__
