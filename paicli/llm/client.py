"""`LLMClient`: the OpenAI-compatible chat client, streaming over one shared `httpx2.AsyncClient`.

One `chat()` call is one logical request: `POST {base_url}/chat/completions` with `stream: true`, retried
as `paicli.llm.retry` describes, with a warning `Notice` on the sink before each retry. Every attempt is
admitted by the client's `Endpoint` (paicli/llm/endpoint.py: the rate gate and the adaptive concurrency
limit, shared by every client of the same endpoint) and reported to it afterwards; a rate-limited answer
closes the gate with one notice for all the requests it holds. A reply that broke off after it had
started streaming (or whose stream ended early: no finish reason, no `[DONE]`) is asked again, and `on_restart`
tells the caller its streamed text is void; what the attempt cost counts in the reply's usage (or, when the
request ends without a reply, failed or cancelled, is told to `on_spent`: paicli/llm/attempts.py). Every failure
leaves as a `paicli.common.errors.ModelError` whose message starts with "model request failed:" and carries the
server's own words (paicli/llm/failures.py words them); the API key is scrubbed from every message.
Cancelling the awaiting task closes the HTTP stream at once (the `async with` around it exits).

An error reply (4xx or 5xx) whose body names a request field or value the server does not support is
recognised on the first reply (paicli/llm/rejections.py), never retried as it was: a field the client
adds itself (`stream_options`, `temperature`, `parallel_tool_calls`, `max_tokens` where
`max_completion_tokens` is wanted, reasoning sent back) is dropped or changed and the request sent again
at once, without counting an attempt; a field the caller asked for (`response_format` json_schema or
json_object, `tools`) ends the request with `UnsupportedRequest`, so the caller picks another way. Either
way it is recorded in `capabilities` (per model, remembered across runs when the client has a store).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import httpx2

from paicli import __version__
from paicli.common.errors import ModelError, ModelHTTPError, ModelProtocolError
from paicli.common.events import EventSink, Notice, NullSink
from paicli.llm.attempts import RequestState, RetryLater, fault_kind
from paicli.llm.capabilities import Capabilities
from paicli.llm.capability_store import CapabilityStore
from paicli.llm.endpoint import Admission, Endpoint, RateStatus
from paicli.llm.failures import budget_spent, final_error, http_error, redact, transport_error, unsupported
from paicli.llm.images import CAPABILITY as VISION
from paicli.llm.images import without_images
from paicli.llm.rate_gate import Closing, RateBudgetSpent
from paicli.llm.reasoning import outgoing, rule_for
from paicli.llm.rejections import rejected_field
from paicli.llm.replies import HTML_REPLY, read_stream, server_message, whole_reply
from paicli.llm.retry import Backoff, is_rate_limit
from paicli.llm.tls import tls_for
from paicli.llm.tokens import estimate_completion, estimate_prompt, fill_in
from paicli.llm.types import ChatResponse, Message, RestartCallback, TextCallback, ToolSpec, UsageCallback

MAX_ADAPTATIONS = 4  # request changes for one call, so a server that keeps changing its mind cannot loop


class LLMClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        http: httpx2.AsyncClient | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        sink: EventSink | None = None,
        store: CapabilityStore | None = None,
        headers: dict[str, str] | None = None,
        endpoint: Endpoint | None = None,
        rate_limit_wait: float = 120.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_attempts = max(1, max_attempts)
        self._api_key = api_key
        self._headers = dict(headers or {})  # a provider's own (OpenRouter's app name)
        self._url = f"{self.base_url}/chat/completions"
        self._read_timeout = read_timeout
        self._timeout = httpx2.Timeout(read_timeout, connect=connect_timeout)
        self._owns_http = http is None
        self._http = http if http is not None else httpx2.AsyncClient(timeout=self._timeout, verify=tls_for(base_url))
        self._backoff = Backoff(base=backoff_base, cap=backoff_max)
        # shared with every client of the same endpoint (paicli/runtime.py); a client of its own otherwise
        self.endpoint = endpoint or Endpoint(backoff=self._backoff)
        self.rate_limit_wait = rate_limit_wait
        self._sink = sink or NullSink()
        self.capabilities = Capabilities(lambda: self.model, base_url=self.base_url, store=store)

    def rate_status(self) -> RateStatus | None:
        """What rate limiting holds back now (the live view shows it); None when nothing."""
        return self.endpoint.status()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def list_models(self) -> list[str]:
        """The model names `GET {base_url}/models` lists; ModelError (one line) when it lists none."""
        headers = {**self._headers, "User-Agent": f"paicli/{__version__}"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            response = await self._http.get(f"{self.base_url}/models", headers=headers, timeout=self._timeout)
        except httpx2.HTTPError as exc:
            raise ModelError(self._redact(f"GET {self.base_url}/models failed ({exc or type(exc).__name__})")) from exc
        if response.status_code >= 400:
            raise ModelError(self._redact(f"GET /models: HTTP {response.status_code}: {server_message(response)}"))
        try:
            entries = response.json().get("data")
        except (ValueError, AttributeError):
            entries = None
        if not isinstance(entries, list):
            raise ModelError("GET /models did not answer with a model list")
        return [str(entry["id"]) for entry in entries if isinstance(entry, dict) and entry.get("id")]

    async def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        on_text: TextCallback | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        on_reasoning: TextCallback | None = None,
        on_restart: RestartCallback | None = None,
        on_spent: UsageCallback | None = None,
    ) -> ChatResponse:
        request = RequestState(on_text, on_reasoning)
        try:
            return await self._chat(messages, request, tools, response_format, model, max_tokens, on_restart)
        except BaseException:  # failed or cancelled: what reached the server still counts
            if on_spent is not None and request.spent.total:
                on_spent(request.spent)
            raise

    async def _chat(
        self,
        messages: list[Message],
        request: RequestState,
        tools: list[ToolSpec] | None,
        response_format: dict[str, Any] | None,
        model: str | None,
        max_tokens: int | None,
        on_restart: RestartCallback | None,
    ) -> ChatResponse:
        while True:
            body = self._body(messages, tools, response_format, model, max_tokens)
            admission = await self._admit(request)
            try:
                response = await self._attempt(body, request)
            except ModelError as error:
                request.spend(body)
                if isinstance(error, ModelHTTPError) and (field := rejected_field(error.status, str(error), body)):
                    self.endpoint.finish(admission, "failed")
                    if request.adaptations < MAX_ADAPTATIONS and self._adapt(field, body):
                        request.adaptations += 1
                        continue
                    raise final_error(unsupported(error, field), request, self._api_key) from error
                if isinstance(error, RetryLater) and is_rate_limit(error.status):
                    closing = self.endpoint.finish(admission, "limited", error.retry_after)
                    self._rate_limited(error, request, closing)
                    continue
                self.endpoint.finish(admission, "failed")
                await self._after_fault(error, request, on_restart)
            except BaseException:
                request.spend(body)
                self.endpoint.finish(admission, "cancelled")
                raise
            else:  # estimated where the server reported none; counted for the model the request named
                self.endpoint.finish(admission, "ok")
                response = _with_usage(response, body)
                usage = response.usage.of_model(body["model"]) + request.spent  # with its attempts cut short
                return response.model_copy(update={"usage": usage, "retries": request.tally()})

    # ---- retries (paicli/llm/retry.py says which, and how long) --------------------------------------

    async def _admit(self, request: RequestState) -> Admission:
        """Waits for the endpoint's gate and a place in flight; a closed gate starts this request's rate
        limit budget, and a budget spent ends the request."""
        clock = self.endpoint.clock
        started = clock()
        if self.endpoint.gate.closed and request.limited_since is None:
            request.limited_since = started
        deadline = None if request.limited_since is None else request.limited_since + self.rate_limit_wait
        try:
            return await self.endpoint.admit(deadline)
        except RateBudgetSpent as spent:
            raise budget_spent(request, spent.reopens_in, self.rate_limit_wait, self._api_key) from None
        finally:
            if request.limited_since is not None:
                request.waited += clock() - started

    def _rate_limited(self, error: RetryLater, request: RequestState, closing: Closing | None) -> None:
        request.rate_limited += 1
        request.last_limit = error
        if request.limited_since is None:
            request.limited_since = self.endpoint.clock()
        if closing is not None and closing.news:
            limit = self.endpoint.limit
            self._notify(
                f"rate limited ({error}); waiting {closing.wait:.1f} s before trying again, "
                f"{limit.limit} of {limit.maximum} requests at once"
            )

    async def _after_fault(self, error: ModelError, request: RequestState, on_restart: RestartCallback | None) -> None:
        """Returns when the request should go again (after the backoff), raises when it should not."""
        if not error.retryable or request.attempt >= self.max_attempts:
            raise final_error(error, request, self._api_key) from error
        request.count(fault_kind(error))
        retry_after = error.retry_after if isinstance(error, RetryLater) else None
        delay = self._backoff.delay(request.attempt, retry_after)
        again = "asking again" if request.delivered else "retrying"
        if request.delivered:  # before the notice, which would print the broken-off text as it stands
            request.delivered = False
            if on_restart is not None:
                on_restart()
        attempt = f"attempt {request.attempt + 1} of {self.max_attempts}"
        self._notify(f"model request failed ({error}), {again} in {delay:.1f} s, {attempt}")
        await asyncio.sleep(delay)
        request.waited += delay
        request.attempt += 1

    # ---- one attempt ---------------------------------------------------------------------------------

    def _body(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        response_format: dict[str, Any] | None,
        model: str | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        name = model or self.model
        accepts = self.capabilities.for_model(name).accepts
        rule = rule_for(name, required=not accepts("reasoning.required"), refused=not accepts("reasoning.refused"))
        sent = outgoing(messages, rule) if accepts(VISION) else without_images(outgoing(messages, rule))
        body: dict[str, Any] = {"model": name, "messages": sent, "stream": True}
        if accepts("stream_options"):
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
        if response_format is not None:
            body["response_format"] = response_format
        if self.temperature is not None and accepts("temperature"):
            body["temperature"] = self.temperature
        limit = max_tokens or self.max_tokens
        if limit:
            body["max_tokens" if accepts("max_tokens") else "max_completion_tokens"] = limit
        return body

    async def _attempt(self, body: dict[str, Any], request: RequestState) -> ChatResponse:
        assembler = request.begin()

        async def trace(name: str, info: dict[str, Any]) -> None:
            request.sent(name, info)

        headers = {**self._headers, "Accept": "text/event-stream", "User-Agent": f"paicli/{__version__}"}
        if self._api_key:  # a local server may need none
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            async with self._http.stream(
                "POST", self._url, json=body, headers=headers, timeout=self._timeout, extensions={"trace": trace}
            ) as response:
                request.answered(response.status_code)
                if response.status_code >= 400:
                    await response.aread()
                    raise http_error(response, self._url, body["model"])
                content_type = response.headers.get("content-type", "").lower()
                if "html" in content_type:
                    raise ModelProtocolError(f"{HTML_REPLY} (POST {self._url})")
                if "json" in content_type:  # the server ignored `stream: true`
                    await response.aread()
                    return whole_reply(response.text, assembler)
                return await read_stream(response, assembler)
        except httpx2.HTTPError as exc:
            raise transport_error(
                exc, started=assembler.started, base_url=self.base_url, read_timeout=self._read_timeout
            ) from exc
        except httpx2.InvalidURL as exc:
            raise ModelError(f"the base URL {self.base_url!r} is not a valid URL ({exc})") from exc

    def _adapt(self, field: str, body: dict[str, Any]) -> bool:
        """Records that the model's server rejects `field`; True when the request can go again without it
        (a field the client adds itself), False when the caller must decide (response_format, tools) or
        the field was already known to be rejected (the same refusal twice: give up)."""
        if not self.capabilities.reject(field, body["model"]):
            return False
        if field in ("stream_options", "temperature", "parallel_tool_calls", "max_tokens"):
            what = "`max_tokens` (sending `max_completion_tokens`)" if field == "max_tokens" else f"`{field}`"
            self._notify(f"the model server does not accept {what}; sending the request without it", "info")
            return True
        if field == VISION:
            self._notify(f"{body['model']} does not take images: sending the message without them", "warning")
            return True
        if field == "reasoning.required":
            self.capabilities.allow("reasoning.refused", body["model"])
            self._notify("the model server wants its reasoning sent back; sending it", "info")
            return True
        if field == "reasoning.refused":
            self.capabilities.allow("reasoning.required", body["model"])
            self._notify("the model server does not accept reasoning sent back; leaving it out", "info")
            return True
        self._notify(f"the model server does not support {field.replace('.', ' ')} for {body['model']}", "info")
        return False

    def _notify(self, message: str, level: Literal["info", "warning"] = "warning") -> None:
        self._sink.emit(Notice(level=level, message=self._redact(message)))

    def _redact(self, text: str) -> str:
        return redact(text, self._api_key)


# ---- reading replies -----------------------------------------------------------------------------------


def _with_usage(response: ChatResponse, body: dict[str, Any]) -> ChatResponse:
    """The reply with the usage the server left out estimated (paicli/llm/tokens.py) and marked so."""
    usage = response.usage
    said_something = response.content or response.reasoning or response.tool_calls
    if usage.prompt_tokens and (usage.completion_tokens or not said_something):
        return response
    prompt = estimate_prompt(body["messages"], body.get("tools"))
    calls = ((call.name, call.arguments) for call in response.tool_calls)
    completion = estimate_completion(response.content, response.reasoning, calls)
    return response.model_copy(update={"usage": fill_in(usage, prompt, completion)})
