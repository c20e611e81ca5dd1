"""LLMClient against the scripted server over real HTTP: what it sends, and how it reads streamed replies."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from paicli.common.errors import ModelProtocolError
from paicli.common.values import Usage
from paicli.llm.client import LLMClient
from paicli.llm.tokens import estimate_prompt, estimate_text
from tests.fakellm import FakeLLM, Reply

KEY = "sk-test-0123456789abcdef"
USER = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    llm = LLMClient(base_url=fake.base_url + "/", api_key=KEY, model="fake-model", backoff_base=0.01)
    yield llm
    await llm.aclose()


def _frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@pytest.mark.parametrize("chunk", [1, 3, 7, 1000])
async def test_content_arrives_through_on_text_in_any_split(fake: FakeLLM, client: LLMClient, chunk: int) -> None:
    text = "Héllo, wörld — ünïcode ✓ and\nnew lines\r\n and {braces}"
    fake.on("hello", Reply.text(text, chunk=chunk))
    deltas: list[str] = []
    response = await client.chat(USER, on_text=deltas.append)
    assert response.content == text
    assert "".join(deltas) == text
    assert len(deltas) == -(-len(text) // chunk)
    assert response.finish_reason == "stop"
    assert response.tool_calls == []


async def test_request_is_a_streamed_chat_completion_with_bearer_key(fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("hi"), repeat=True)
    llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m1", temperature=0.2, max_tokens=50, backoff_base=0.01)
    try:
        await llm.chat(USER, tools=TOOLS, response_format={"type": "json_object"})
        await llm.chat(USER, model="m2", max_tokens=7)
    finally:
        await llm.aclose()
    first, second = fake.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body == {
        "model": "m1",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": TOOLS,
        "response_format": {"type": "json_object"},
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert second.body is not None
    assert (second.body["model"], second.body["max_tokens"]) == ("m2", 7)
    assert "tools" not in second.body and "response_format" not in second.body


async def test_usage_comes_from_the_usage_chunk(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("hi", usage={"prompt_tokens": 123, "completion_tokens": 45}))
    response = await client.chat(USER)
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (123, 45)


async def test_computed_usage_matches_the_fake_rule(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("a reply of some length"))
    response = await client.chat(USER, tools=TOOLS)
    assert response.usage.prompt_tokens == len(json.dumps(USER + TOOLS)) // 4
    assert response.usage.completion_tokens == len("a reply of some length") // 4


@pytest.mark.parametrize("omit_index", [False, True])
@pytest.mark.parametrize("chunk", [1, 4])
async def test_several_tool_calls_are_assembled_from_fragments(
    fake: FakeLLM, client: LLMClient, omit_index: bool, chunk: int
) -> None:
    calls = [
        ("read_file", {"path": "src/ä.py", "offset": 3}),
        ("write_file", {"path": "b.txt", "content": 'line "one"\nline two'}),
        ("list_dir", {}),
    ]
    fake.on("hello", Reply.tool_calls(calls, content="Let me look.", chunk=chunk, omit_index=omit_index))
    response = await client.chat(USER, tools=TOOLS)
    assert response.content == "Let me look."
    assert response.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in response.tool_calls] == calls
    ids = [c.id for c in response.tool_calls]
    assert len(set(ids)) == 3 and all(ids)
    assert response.to_message()["tool_calls"][1]["function"]["name"] == "write_file"


async def test_calls_sharing_an_index_but_not_an_id_stay_apart(fake: FakeLLM, client: LLMClient) -> None:
    def fragment(**fields: Any) -> bytes:
        return _frame({"tool_calls": [{"index": 0, **fields}]})

    fake.on(
        "hello",
        Reply.raw(
            [
                fragment(id="a", type="function", function={"name": "read_file", "arguments": '{"path":'}),
                fragment(function={"arguments": ' "x"}'}),
                fragment(id="b", type="function", function={"name": "list_dir", "arguments": "{}"}),
                _frame({}, "tool_calls"),
                b"data: [DONE]\n\n",
            ]
        ),
    )
    response = await client.chat(USER)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("a", "read_file", '{"path": "x"}'),
        ("b", "list_dir", "{}"),
    ]


async def test_malformed_tool_arguments_are_returned_raw_for_the_tools_to_judge(
    fake: FakeLLM, client: LLMClient
) -> None:
    fake.on("hello", Reply.tool_calls([("read_file", '{"path": "a.py",,}')]))
    response = await client.chat(USER)
    assert response.tool_calls[0].arguments == '{"path": "a.py",,}'


async def test_a_text_reply_cut_by_the_token_limit_is_returned_as_length(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("The answer is cut", finish_reason="length"))
    response = await client.chat(USER)
    assert (response.content, response.finish_reason) == ("The answer is cut", "length")


async def test_a_tool_call_cut_by_the_token_limit_is_a_protocol_error(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.tool_calls([("write_file", '{"path": "a.py", "content": "def f(')], finish_reason="length"))
    with pytest.raises(ModelProtocolError, match=r"token limit.*write_file"):
        await client.chat(USER)
    assert len(fake.requests) == 1


async def test_sse_details_are_read_leniently(fake: FakeLLM, client: LLMClient) -> None:
    """Comments, CRLF line ends, `data:` without a space, bytes split mid-character, no [DONE]."""
    body = (
        b": keep-alive\r\n\r\n"
        + _frame({"role": "assistant"}).replace(b"\n", b"\r\n")
        + b'data:{"choices":[{"index":0,"delta":{"content":"gr\xc3\xbc'
        + b'\xc3\x9f e"}}]}\n\n'
        + _frame({}, "stop")
    )
    parts = [body[i : i + 5] for i in range(0, len(body), 5)]
    fake.on("hello", Reply.raw(parts, chunk_delay=0.001))
    response = await client.chat(USER)
    assert (response.content, response.finish_reason) == ("grüß e", "stop")


async def test_a_server_that_ignores_stream_true_is_understood(fake: FakeLLM, client: LLMClient) -> None:
    completion = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
                        {"id": "c2", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}},
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    fake.on("hello", Reply.raw([json.dumps(completion).encode()], content_type="application/json"))
    seen: list[str] = []
    response = await client.chat(USER, on_text=seen.append)
    assert seen == ["Reading."]
    assert [c.id for c in response.tool_calls] == ["c1", "c2"]
    assert response.usage.prompt_tokens == 5


async def test_parallel_chats_share_one_client(fake: FakeLLM, client: LLMClient) -> None:
    for n in range(5):
        fake.on(f"task {n}", Reply.text(f"answer {n}", latency=1.5, chunk=2))
    replies = await asyncio.gather(*(client.chat([{"role": "user", "content": f"task {n}"}]) for n in range(5)))
    assert [r.content for r in replies] == [f"answer {n}" for n in range(5)]
    records = fake.requests
    for record in records:  # the server notes a reply finished just after its last byte: the client may be first
        assert await asyncio.to_thread(record.wait_finished, 3.0)
    assert max(r.started for r in records) < min(r.finished or 0 for r in records)


@pytest.mark.parametrize("reply", [Reply.hang(), Reply.hang(after_chunks=2)], ids=["before", "mid-stream"])
async def test_cancelling_the_caller_closes_the_stream_at_once(fake: FakeLLM, client: LLMClient, reply: Reply) -> None:
    fake.on("hello", reply)
    deltas: list[str] = []
    spent: list[Usage] = []
    task = asyncio.create_task(client.chat(USER, on_text=deltas.append, on_spent=spent.append))
    while not fake.requests:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    task.cancel()
    cancelled_at = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = fake.requests[0]
    assert await asyncio.to_thread(record.wait_finished, 3.0)
    assert record.disconnected
    assert record.finished is not None and record.finished - cancelled_at < 1.0
    assert len(fake.requests) == 1
    # it reached the server, so it counts (issue 32): the prompt and what had streamed, estimated
    (usage,) = spent
    assert usage.prompt_tokens == estimate_prompt(USER) and usage.estimated
    assert usage.completion_tokens == estimate_text("".join(deltas)) and usage.by_model["fake-model"].prompt_tokens


async def test_a_cancelled_stream_counts_the_usage_the_server_had_sent(fake: FakeLLM, client: LLMClient) -> None:
    """Issue 32: a server that reports usage as it streams (vLLM's continuous usage stats) said what the cut
    request cost: that counts, as reported, not paicli's estimate."""
    sent = {"prompt_tokens": 1234, "completion_tokens": 5}
    text = {"choices": [{"index": 0, "delta": {"content": "thinking"}, "finish_reason": None}], "usage": sent}
    started = _frame({"role": "assistant", "content": ""}) + b"data: " + json.dumps(text).encode() + b"\n\n"
    fake.on("hello", Reply.raw([started, _frame({}, "stop") + b"data: [DONE]\n\n"], chunk_delay=60))
    deltas: list[str] = []
    spent: list[Usage] = []
    task = asyncio.create_task(client.chat(USER, on_text=deltas.append, on_spent=spent.append))
    while not deltas:  # the text has arrived, and with it (in the same chunk) the usage so far
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (usage,) = spent
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (1234, 5, False)
    assert usage.by_model["fake-model"].prompt_tokens == 1234


async def test_a_request_cancelled_before_it_reached_the_server_costs_nothing() -> None:
    with socket.socket() as listener:  # accepts connections (the kernel does) but never reads a byte
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        llm = LLMClient(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key=KEY, model="m")
        spent: list[Usage] = []
        task = asyncio.create_task(llm.chat([{"role": "user", "content": "x" * 32_000_000}], on_spent=spent.append))
        await asyncio.sleep(0.3)  # the body fills the socket's buffers and waits
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await llm.aclose()
    assert spent == []


async def test_wait_for_timeout_cancels_the_request(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.hang())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(client.chat(USER), timeout=0.3)
    record = fake.requests[0]
    assert await asyncio.to_thread(record.wait_finished, 3.0)
    assert record.disconnected


async def test_a_shared_http_client_is_left_open(fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("hi"), repeat=True)
    async with httpx2.AsyncClient() as http:
        llm = LLMClient(base_url=fake.base_url, api_key=KEY, model="m", http=http)
        assert (await llm.chat(USER)).content == "hi"
        await llm.aclose()
        assert not http.is_closed
        assert (await llm.chat(USER)).content == "hi"


async def test_the_connection_is_reused_after_a_complete_reply(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("one"), Reply.tool_calls([("list_dir", {})]), Reply.text("three"))
    for _ in range(3):
        await client.chat(USER)
    assert len({r.client_port for r in fake.requests}) == 1


async def test_usage_is_counted_for_the_model_the_request_named(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("hi", usage={"prompt_tokens": 12, "completion_tokens": 3}), repeat=True)
    routed = await client.chat(USER, model="other-model")
    default = await client.chat(USER)
    tokens = {"prompt_tokens": 12, "completion_tokens": 3}
    assert [r.body["model"] for r in fake.requests if r.body] == ["other-model", "fake-model"]
    assert routed.usage.model_dump() == {**tokens, "by_model": {"other-model": tokens}}
    assert (routed.usage + default.usage).model_dump()["by_model"] == {"other-model": tokens, "fake-model": tokens}
