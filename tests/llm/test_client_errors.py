"""LLMClient failures over real HTTP: what is retried, what is not, and what the user is told."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator
from email.utils import formatdate

import pytest

from paicli.common.errors import ModelError, ModelHTTPError, ModelProtocolError
from paicli.common.events import ListSink, Notice
from paicli.common.values import Usage
from paicli.llm.client import LLMClient
from paicli.llm.tokens import estimate_prompt, estimate_text
from tests.fakellm import FakeLLM, Reply, any_request

KEY = "sk-test-0123456789abcdef"
USER = [{"role": "user", "content": "hello"}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
async def client(fake: FakeLLM, sink: ListSink) -> AsyncIterator[LLMClient]:
    llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m", backoff_base=0.01, backoff_max=2.0, sink=sink)
    yield llm
    await llm.aclose()


def _notices(sink: ListSink) -> list[str]:
    return [e.message for e in sink.events if isinstance(e, Notice)]


async def test_429_waits_as_long_as_retry_after_says(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on("hello", Reply.error(429, "Rate limit reached", headers={"Retry-After": "1"}), Reply.text("ok"))
    assert (await client.chat(USER)).content == "ok"
    first, second = fake.requests
    assert first.finished is not None
    assert 0.8 <= second.started - first.finished < 5.0
    assert _notices(sink) == [
        "rate limited (HTTP 429: Rate limit reached); waiting 1.0 s before trying again, 32 of 64 requests at once"
    ]


async def test_a_retry_after_beyond_the_budget_fails_at_once_and_says_why(fake: FakeLLM, sink: ListSink) -> None:
    far_future = formatdate(time.time() + 3600, usegmt=True)
    fake.on("hello", Reply.error(503, "busy", headers={"Retry-After": far_future}), Reply.text("never used"))
    llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m", sink=sink, rate_limit_wait=5)
    try:
        with pytest.raises(ModelHTTPError) as caught:
            await llm.chat(USER)
    finally:
        await llm.aclose()
    assert caught.value.status == 503 and len(fake.requests) == 1
    assert re.search(r"HTTP 503: busy — rate limited: the server asks for 3[56]\d\d s more", str(caught.value))
    assert "rate_limit_wait (5 s)" in str(caught.value)


async def test_500_is_retried_then_reported_with_the_servers_message(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on("hello", Reply.error(500, "upstream model crashed"), repeat=True)
    with pytest.raises(ModelHTTPError) as caught:
        await client.chat(USER)
    assert caught.value.status == 500
    assert str(caught.value) == ("model request failed: HTTP 500: upstream model crashed (gave up after 3 attempts)")
    assert len(fake.requests) == 3
    assert [n.split(", retrying")[0] for n in _notices(sink)] == [
        "model request failed (HTTP 500: upstream model crashed)"
    ] * 2
    assert [n.rsplit(", ", 1)[1] for n in _notices(sink)] == ["attempt 2 of 3", "attempt 3 of 3"]


async def test_a_transient_failure_recovers(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.error(502, "bad gateway"), Reply.error(408, "timeout"), Reply.text("fine"))
    assert (await client.chat(USER)).content == "fine"
    assert len(fake.requests) == 3


async def test_401_is_not_retried_and_points_at_the_key(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on("hello", Reply.error(401, "Incorrect API key provided"), repeat=True)
    with pytest.raises(ModelHTTPError) as caught:
        await client.chat(USER)
    assert caught.value.status == 401
    assert "Incorrect API key provided" in str(caught.value)
    assert "PAICLI_API_KEY" in str(caught.value)
    assert len(fake.requests) == 1
    assert _notices(sink) == []


@pytest.mark.parametrize("status", [400, 403, 404, 422])
async def test_other_client_errors_are_not_retried(fake: FakeLLM, client: LLMClient, status: int) -> None:
    fake.on("hello", Reply.error(status, f"the server says no ({status})"), repeat=True)
    with pytest.raises(ModelHTTPError) as caught:
        await client.chat(USER)
    assert caught.value.status == status and not caught.value.retryable
    assert f"HTTP {status}: the server says no ({status})" in str(caught.value)
    assert len(fake.requests) == 1


async def test_a_read_timeout_is_retried_then_reported(fake: FakeLLM, sink: ListSink) -> None:
    fake.on("hello", Reply.hang(), repeat=True)
    llm = LLMClient(
        base_url=fake.base_url,
        api_key=KEY,
        model="m",
        read_timeout=0.3,
        max_attempts=2,
        backoff_base=0.01,
        sink=sink,
    )
    try:
        with pytest.raises(ModelError, match=r"no answer within 0.3 s \(read timeout\).*2 attempts"):
            await llm.chat(USER)
    finally:
        await llm.aclose()
    assert len(fake.requests) == 2
    assert "no answer within 0.3 s" in _notices(sink)[0]


async def test_an_unreachable_server_is_retried_then_reported(sink: ListSink) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, so nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    llm = LLMClient(base_url=base, api_key=KEY, model="m", backoff_base=0.01, max_attempts=2, sink=sink)
    try:
        with pytest.raises(ModelError, match=f"could not connect to {base}"):
            await llm.chat(USER)
    finally:
        await llm.aclose()
    assert len(_notices(sink)) == 1


async def test_a_stream_dropped_before_any_content_is_retried(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.drop(after_chunks=0), Reply.text("second try"))
    deltas: list[str] = []
    assert (await client.chat(USER, on_text=deltas.append)).content == "second try"
    assert deltas == ["second ", "try"]
    assert len(fake.requests) == 2


async def test_a_stream_dropped_after_content_started_is_asked_again_and_restarts_the_text(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on("hello", Reply.drop(after_chunks=2, content="partial answer here"), Reply.text("whole answer"))
    deltas: list[str] = []
    reply = await client.chat(USER, on_text=deltas.append, on_restart=lambda: deltas.append("<restart>"))
    assert reply.content == "whole answer" and reply.retries.streams == 1
    assert deltas == ["partial", " answer", "<restart>", "whole a", "nswer"]
    assert len(fake.requests) == 2
    assert "the stream broke off after the reply had started" in _notices(sink)[0]
    assert "asking again in" in _notices(sink)[0]


async def test_a_stream_that_keeps_dropping_fails_after_the_attempts(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.drop(after_chunks=2, content="partial answer here"), repeat=True)
    with pytest.raises(ModelProtocolError, match="broke off after the reply had started") as caught:
        await client.chat(USER)
    assert "gave up after 3 attempts" in str(caught.value) and len(fake.requests) == 3
    assert caught.value.retries is not None and caught.value.retries["streams"] == 2


async def test_a_stream_that_ends_cleanly_mid_text_is_asked_again_and_its_tokens_count(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    """Issue 32: a proxy's time-out closes the stream as if it had ended (no finish_reason, no [DONE])."""
    fake.on("hello", Reply.cut(2, content="partial answer here"), Reply.text("whole answer"))
    deltas: list[str] = []
    reply = await client.chat(USER, on_text=deltas.append, on_restart=lambda: deltas.append("<restart>"))
    assert reply.content == "whole answer" and reply.retries.streams == 1
    assert deltas == ["partial", " answer", "<restart>", "whole a", "nswer"]
    assert len(fake.requests) == 2 and not fake.requests[0].disconnected  # it ended, nothing was dropped
    assert "ended before the reply was complete" in _notices(sink)[0] and "asking again in" in _notices(sink)[0]
    # the cut request counts: its prompt and what it streamed, estimated (the server said nothing of it)
    whole = fake.requests[1].body
    assert whole is not None
    prompt = estimate_prompt(whole["messages"])
    assert reply.usage.prompt_tokens == prompt + len(json.dumps(whole["messages"])) // 4
    assert reply.usage.completion_tokens == estimate_text("partial answer") + len("whole answer") // 4
    assert reply.usage.estimated and reply.usage.by_model["m"].prompt_tokens == reply.usage.prompt_tokens


async def test_a_stream_that_ends_cleanly_mid_tool_call_is_asked_again(fake: FakeLLM, client: LLMClient) -> None:
    call = [("read_file", {"path": "src/app.py"})]
    fake.on("hello", Reply.cut(3, content="", calls=call, chunk=5), Reply.tool_calls(call))
    reply = await client.chat(USER, tools=[])
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [("read_file", {"path": "src/app.py"})]
    assert len(fake.requests) == 2 and reply.retries.streams == 1


async def test_a_cut_streams_own_usage_counts_when_the_server_sent_it(fake: FakeLLM, client: LLMClient) -> None:
    sent = {"prompt_tokens": 1000, "completion_tokens": 7}
    fake.on("hello", Reply.cut(1, usage=sent), Reply.text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 1}))
    reply = await client.chat(USER)
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (2000, 8) and not reply.usage.estimated


async def test_a_request_that_keeps_ending_early_fails_and_tells_what_it_cost(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.cut(1, content="partial"), repeat=True)
    spent: list[Usage] = []
    with pytest.raises(ModelProtocolError, match="ended before the reply was complete") as caught:
        await client.chat(USER, on_spent=spent.append)
    assert "gave up after 3 attempts" in str(caught.value) and len(fake.requests) == 3
    (usage,) = spent
    assert usage.prompt_tokens == 3 * estimate_prompt(USER) and usage.completion_tokens == 3 * estimate_text("partial")
    assert usage.estimated


async def test_an_error_answer_costs_nothing(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.error(500, "boom"), repeat=True)
    spent: list[Usage] = []
    with pytest.raises(ModelHTTPError):
        await client.chat(USER, on_spent=spent.append)
    assert spent == []


@pytest.mark.parametrize("status", [200, 404])
async def test_an_html_page_asks_whether_the_base_url_is_the_api_root(
    fake: FakeLLM, client: LLMClient, status: int
) -> None:
    if status == 200:
        fake.on("hello", Reply.raw([b"<!DOCTYPE html><html><body>Welcome</body></html>"], content_type="text/html"))
    else:
        fake.on("hello", Reply.error(404, "Not Found", html=True))
    with pytest.raises(ModelError) as caught:
        await client.chat(USER)
    assert "the server answered with an HTML page, not JSON — is the base URL the API root?" in str(caught.value)
    assert "<html" not in str(caught.value)
    assert len(fake.requests) == 1


async def test_a_plain_text_error_body_is_quoted(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.raw([b"model 'x' not loaded\n"], status=400, content_type="text/plain"))
    with pytest.raises(ModelHTTPError, match="HTTP 400: model 'x' not loaded"):
        await client.chat(USER)


async def test_empty_choices_without_content_is_a_protocol_error(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.raw([b'data: {"choices": [], "usage": null}\n\n', b"data: [DONE]\n\n"]))
    with pytest.raises(ModelProtocolError, match="no choices"):
        await client.chat(USER)


async def test_malformed_sse_json_is_a_protocol_error(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.raw([b'data: {"choices": [{"delta": \n\n', b"data: [DONE]\n\n"]))
    with pytest.raises(ModelProtocolError, match="not valid JSON"):
        await client.chat(USER)
    assert len(fake.requests) == 1


async def test_an_error_object_in_the_stream_carries_its_message(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.raw([b'data: {"error": {"message": "context length exceeded"}}\n\n']), repeat=True)
    with pytest.raises(ModelProtocolError, match="context length exceeded"):
        await client.chat(USER)


async def test_unsupported_stream_options_are_dropped_once(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on(
        lambda body: "stream_options" in body,
        Reply.error(400, "Unrecognized request argument supplied: stream_options"),
        repeat=True,
    )
    fake.on("hello", Reply.text("ok"), repeat=True)
    assert (await client.chat(USER)).content == "ok"
    assert (await client.chat(USER)).content == "ok"
    assert [("stream_options" in (r.body or {})) for r in fake.requests] == [True, False, False]
    assert any("stream_options" in n for n in _notices(sink))


async def test_max_tokens_becomes_max_completion_tokens_when_the_server_asks(fake: FakeLLM) -> None:
    fake.on(
        lambda body: "max_tokens" in body,
        Reply.error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."),
        repeat=True,
    )
    fake.on("hello", Reply.text("ok"))
    llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m", max_tokens=99)
    try:
        assert (await llm.chat(USER)).content == "ok"
    finally:
        await llm.aclose()
    assert fake.requests[-1].body is not None and fake.requests[-1].body["max_completion_tokens"] == 99


@pytest.mark.parametrize(
    "reply",
    [
        Reply.error(401, f"Incorrect API key provided: {KEY}"),
        Reply.error(500, f"internal error for key {KEY}"),
        Reply.error(400, f"bad request from Bearer {KEY}"),
        Reply.raw([f"data: {{not json {KEY}\n\n".encode()]),
        Reply.raw([json.dumps({"error": {"message": f"key {KEY} revoked"}}).encode()], content_type="application/json"),
    ],
    ids=["401", "500", "400", "bad-sse", "json-error"],
)
async def test_the_api_key_never_appears_in_errors_or_notices(
    fake: FakeLLM, client: LLMClient, sink: ListSink, reply: Reply
) -> None:
    fake.on(any_request, reply, repeat=True)
    with pytest.raises(ModelError) as caught:
        await client.chat(USER)
    assert KEY not in str(caught.value)
    assert "***" in str(caught.value)
    assert all(KEY not in n for n in _notices(sink))


async def test_max_attempts_one_means_no_retry(fake: FakeLLM) -> None:
    fake.on("hello", Reply.error(502, "bad gateway"), repeat=True)
    llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m", max_attempts=1)
    try:
        with pytest.raises(ModelHTTPError) as caught:
            await llm.chat(USER)
    finally:
        await llm.aclose()
    assert str(caught.value) == "model request failed: HTTP 502: bad gateway"
    assert len(fake.requests) == 1


async def test_a_base_url_without_scheme_is_reported_plainly() -> None:
    llm = LLMClient(base_url="api.example.com/v1", api_key=KEY, model="m", backoff_base=0.01)
    try:
        with pytest.raises(ModelError, match="not an http"):
            await llm.chat(USER)
    finally:
        await llm.aclose()
