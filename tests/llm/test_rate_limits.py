"""Rate limits and broken streams over real HTTP (issue 18), one client or several requests sharing one
endpoint: the gate holds everyone, one probe at a time, the budget, the tallies. The same faults against a
whole plan: tests/faults/test_provider_faults.py."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import Iterator
from email.utils import formatdate
from typing import Any

import pytest

from paicli.common.errors import ModelHTTPError
from paicli.common.events import ListSink, Notice
from paicli.llm.client import LLMClient
from paicli.llm.endpoint import Endpoint
from paicli.llm.retry import Backoff
from paicli.llm.types import ChatResponse
from tests.fakellm import STORM, FakeLLM, Reply, any_request

KEY = "sk-test-0123456789abcdef"


def ask(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"question {n}"}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def client(fake: FakeLLM, sink: ListSink, *, wait: float = 10.0, parallel: int = 8, **kwargs: float) -> LLMClient:
    endpoint = Endpoint(max_in_flight=parallel, backoff=Backoff(base=0.1, cap=1.0))
    return LLMClient(
        base_url=fake.base_url,
        api_key=KEY,
        model="m",
        backoff_base=0.01,
        sink=sink,
        endpoint=endpoint,
        rate_limit_wait=wait,
        **kwargs,
    )  # type: ignore[arg-type]


def notices(sink: ListSink) -> list[str]:
    return [e.message for e in sink.events if isinstance(e, Notice)]


async def one_request(fake: FakeLLM, *, read_timeout: float = 120.0, **chat: Any) -> tuple[ChatResponse, ListSink]:
    sink = ListSink()
    llm = client(fake, sink, read_timeout=read_timeout)
    try:
        return await llm.chat(ask(1), **chat), sink
    finally:
        await llm.aclose()


async def in_a_storm(
    fake: FakeLLM, seconds: float, reply: Reply, requests: int
) -> tuple[list[ChatResponse], ListSink, LLMClient]:
    """`requests` requests at once, through one client, while the server answers `reply` for `seconds`."""
    fake.storm(seconds, reply)
    fake.on(any_request, Reply.text("fine"), repeat=True)
    sink = ListSink()
    llm = client(fake, sink)
    try:
        replies = await asyncio.gather(*(llm.chat(ask(n)) for n in range(requests)))
    finally:
        await llm.aclose()
    return replies, sink, llm


async def test_a_storm_holds_every_request_at_the_gate_and_probes_one_at_a_time(fake: FakeLLM) -> None:
    storm = Reply.error(429, "slow down", headers={"Retry-After": "0.5"})
    replies, sink, llm = await in_a_storm(fake, 1.2, storm, 8)
    assert [r.content for r in replies] == ["fine"] * 8
    stormed = [r for r in fake.requests if r.rule == STORM]
    probes = llm.endpoint.gate.probes  # 1.2 s of storm, one probe each 0.5 s, the last one answered
    assert 1 <= probes <= 4 and len(stormed) <= 8 + probes  # the first burst, then probes: never 8 retrying each
    assert sum(r.retries.rate_limited for r in replies) == len(stormed)
    assert llm.endpoint.limit.limit < 8  # cut while rate limited, growing back
    said = notices(sink)
    assert said and all(n.startswith("rate limited (HTTP 429: slow down); waiting ") for n in said)
    assert len(said) <= 1 + probes  # one notice per closure, not one per waiting request


@pytest.mark.parametrize(
    ("headers", "shown"),
    [
        ({"retry-after-ms": "300"}, r"waiting 0\.3 s"),
        ({"x-ratelimit-reset-requests": "250ms", "x-ratelimit-remaining-requests": "0"}, r"waiting 0\.2 s"),
        ("http-date", r"waiting [0-2]\.\d s"),
    ],
)
async def test_the_servers_time_is_honoured_in_each_spelling(
    fake: FakeLLM, headers: dict[str, str] | str, shown: str
) -> None:
    if headers == "http-date":
        headers = {"Retry-After": formatdate(time.time() + 1.5, usegmt=True)}
    assert isinstance(headers, dict)
    fake.on(any_request, Reply.error(429, "slow down", headers=headers), Reply.text("fine"))
    reply, sink = await one_request(fake)
    assert reply.content == "fine" and reply.retries.rate_limited == 1
    assert re.search(shown, notices(sink)[0]), notices(sink)


async def test_429_without_any_header_backs_off_exponentially_with_jitter(fake: FakeLLM) -> None:
    fake.on(any_request, *[Reply.error(429, "busy")] * 3, Reply.text("fine"))
    reply, sink = await one_request(fake)
    waits = [float(m.group(1)) for n in notices(sink) if (m := re.search(r"waiting (\d+\.\d+) s", n))]
    assert reply.content == "fine" and len(waits) == 3
    assert 0.05 <= waits[0] <= 0.1 and 0.1 <= waits[1] <= 0.2 and 0.2 <= waits[2] <= 0.4  # doubles, never near 0


async def test_a_burst_of_503_is_waited_out_by_parallel_requests(fake: FakeLLM) -> None:
    replies, _, llm = await in_a_storm(fake, 0.5, Reply.error(503, "overloaded"), 6)
    assert [r.content for r in replies] == ["fine"] * 6
    stormed = [r for r in fake.requests if r.rule == STORM]
    assert sum(r.retries.rate_limited for r in replies) == len(stormed) <= 6 + llm.endpoint.gate.probes


async def test_when_the_budget_runs_out_the_request_fails_saying_how_long_it_was_limited(fake: FakeLLM) -> None:
    fake.on(any_request, Reply.error(429, "quota", headers={"Retry-After": "0.2"}), repeat=True)
    sink = ListSink()
    llm = client(fake, sink, wait=0.7)
    try:
        with pytest.raises(ModelHTTPError) as caught:
            await llm.chat(ask(1))
    finally:
        await llm.aclose()
    message = str(caught.value)
    assert message.startswith("model request failed: HTTP 429: quota — rate limited for 0.7 s (rate_limit_wait)")
    assert caught.value.status == 429 and caught.value.retries is not None
    assert caught.value.retries["rate_limited"] == len(fake.requests) <= 5


async def test_a_stream_dropped_mid_tool_call_is_asked_again_and_the_call_arrives_whole(fake: FakeLLM) -> None:
    call = Reply.tool_calls([("write_file", {"path": "a.txt", "content": "hello world"})])
    fake.on(any_request, dataclasses.replace(call, kind="drop", after_chunks=4), call)
    reply, _ = await one_request(fake, tools=[])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("write_file", call.calls[0][1])]
    assert reply.retries.streams == 1 and len(fake.requests) == 2


async def test_a_hung_stream_times_out_and_is_asked_again(fake: FakeLLM) -> None:
    fake.on(any_request, Reply.hang(after_chunks=2, content="thinking about it"), Reply.text("answer"))
    restarts: list[str] = []
    reply, sink = await one_request(fake, read_timeout=0.3, on_restart=lambda: restarts.append("restart"))
    assert reply.content == "answer" and reply.retries.timeouts == 1 and restarts == ["restart"]
    assert "the stream hung: no data for 0.3 s after the reply had started" in notices(sink)[0]


async def test_cancelling_a_request_waiting_at_the_gate_ends_it_at_once(fake: FakeLLM) -> None:
    fake.on(any_request, Reply.error(429, "later", headers={"Retry-After": "30"}), repeat=True)
    llm = client(fake, ListSink(), wait=60)
    try:
        waiting = asyncio.create_task(llm.chat(ask(1)))
        fake.wait_for_requests(1)
        for _ in range(100):
            if llm.endpoint.gate.closed:
                break
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 2)
    finally:
        await llm.aclose()
    assert len(fake.requests) == 1 and llm.endpoint.limit.in_flight == 0


async def test_a_429_for_a_spent_quota_is_not_waited_on(fake: FakeLLM) -> None:
    message = "You exceeded your current quota, please check your plan and billing details."
    fake.on(any_request, Reply.error(429, message), repeat=True)
    with pytest.raises(ModelHTTPError) as caught:
        await one_request(fake)
    assert "quota or balance is spent" in str(caught.value) and not caught.value.retryable
    assert len(fake.requests) == 1
