"""The scripted model server that every other test relies on, exercised with plain httpx2."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx2
import pytest

from tests.fakellm import FAULT, STORM, FakeLLM, Reply, has_tool_result, last_message_contains, no_tools


def _body(text: str, *, stream: bool = True, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": text}], **extra}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _events(response: httpx2.Response) -> list[Any]:
    """The decoded `data:` payloads of an SSE body ([DONE] kept as the string)."""
    events = []
    for block in response.text.split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: ") :]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


@pytest.fixture
def fake() -> Any:
    with FakeLLM() as server:
        yield server


def test_text_reply_streams_in_chunks_with_usage_and_done(fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("Hello there, world", chunk=4))
    response = httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hello"))
    events = _events(response)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    deltas = [e["choices"][0]["delta"].get("content") for e in events[1:-3]]
    assert deltas == ["Hell", "o th", "ere,", " wor", "ld"]
    assert events[-3]["choices"][0]["finish_reason"] == "stop"
    assert events[-2]["choices"] == []
    prompt_tokens = len(json.dumps(_body("hello")["messages"])) // 4
    assert events[-2]["usage"]["prompt_tokens"] == prompt_tokens
    assert events[-2]["usage"]["completion_tokens"] == len("Hello there, world") // 4
    assert events[-1] == "[DONE]"


def test_usage_chunk_only_when_asked(fake: FakeLLM) -> None:
    fake.on("hi", Reply.text("ok"))
    body = _body("hi")
    del body["stream_options"]
    events = _events(httpx2.post(f"{fake.base_url}/chat/completions", json=body))
    assert all("usage" not in e for e in events if isinstance(e, dict))


def test_usage_false_never_sends_usage_like_llamacpp(fake: FakeLLM) -> None:
    fake.on("hi", Reply.text("ok", usage=False), repeat=True)
    events = _events(httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hi")))
    assert all("usage" not in e for e in events if isinstance(e, dict))
    assert "usage" not in httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hi", stream=False)).json()


def test_reasoning_streams_before_the_content_in_its_field(fake: FakeLLM) -> None:
    fake.on("hi", Reply.text("ok", reasoning="hmm", reasoning_field="reasoning", chunk=2))
    events = _events(httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hi")))
    deltas = [e["choices"][0]["delta"] for e in events[1:-3]]
    assert deltas == [{"reasoning": "hm"}, {"reasoning": "m"}, {"content": "ok"}]


def test_tool_call_fragments_carry_id_and_name_first_then_argument_pieces(fake: FakeLLM) -> None:
    fake.on("go", Reply.tool_calls([("read_file", {"path": "a.py"}), ("list_dir", "{}", "my_id")], chunk=3))
    events = _events(httpx2.post(f"{fake.base_url}/chat/completions", json=_body("go")))
    fragments = [f for e in events[1:-3] for f in e["choices"][0]["delta"]["tool_calls"]]
    first = [f for f in fragments if f["index"] == 0]
    assert first[0]["function"]["name"] == "read_file" and first[0]["id"].startswith("call_")
    assert all("id" not in f and "name" not in f["function"] for f in first[1:])
    assert "".join(f["function"]["arguments"] for f in first) == '{"path": "a.py"}'
    assert len(first) > 3
    second = [f for f in fragments if f["index"] == 1]
    assert second[0]["id"] == "my_id"
    assert events[-3]["choices"][0]["finish_reason"] == "tool_calls"


def test_omit_index_leaves_index_out_of_fragments(fake: FakeLLM) -> None:
    fake.on("go", Reply.tool_calls([("a", {}), ("b", {})], omit_index=True))
    events = _events(httpx2.post(f"{fake.base_url}/chat/completions", json=_body("go")))
    fragments = [f for e in events[1:-3] for f in e["choices"][0]["delta"]["tool_calls"]]
    assert fragments and all("index" not in f for f in fragments)


def test_non_streaming_request_gets_a_plain_completion(fake: FakeLLM) -> None:
    fake.on("plan", Reply.tool_calls([("x", {"a": 1})], content="thinking"))
    data = httpx2.post(f"{fake.base_url}/chat/completions", json=_body("plan", stream=False)).json()
    message = data["choices"][0]["message"]
    assert message["content"] == "thinking"
    assert message["tool_calls"][0]["function"] == {"name": "x", "arguments": '{"a": 1}'}
    assert data["usage"]["completion_tokens"] == len("thinking" + '{"a": 1}') // 4


def test_rules_route_by_content_and_are_used_once_unless_repeated(fake: FakeLLM) -> None:
    fake.on(has_tool_result("read_file"), Reply.text("after the tool"))
    fake.on("alpha", Reply.text("A1"), Reply.text("A2"))
    fake.on(no_tools, Reply.text("plain"), repeat=True)
    url = f"{fake.base_url}/chat/completions"

    def content(body: dict[str, Any]) -> str:
        return httpx2.post(url, json={**body, "stream": False}).json()["choices"][0]["message"]["content"]

    assert content(_body("alpha", tools=[{"type": "function"}])) == "A1"
    assert content(_body("alpha", tools=[{"type": "function"}])) == "A2"
    assert content(_body("alpha")) == "plain"
    assert content(_body("beta")) == "plain"
    tool_turn = {
        "messages": [
            {"role": "user", "content": "alpha"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "read_file"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "file text"},
        ]
    }
    assert content(tool_turn) == "after the tool"
    assert [r.rule for r in fake.requests] == [1, 1, 2, 2, 0]


def test_no_matching_rule_is_a_recorded_500(fake: FakeLLM) -> None:
    fake.on(last_message_contains("zzz"), Reply.text("never"))
    response = httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hello"))
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "fakellm: no rule matched"
    assert fake.requests[0].status == 500 and fake.requests[0].rule is None


def test_error_reply_sends_json_or_html_with_headers(fake: FakeLLM) -> None:
    fake.on("json", Reply.error(429, "slow down", headers={"Retry-After": "3"}))
    fake.on("html", Reply.error(502, "Bad Gateway", html=True))
    url = f"{fake.base_url}/chat/completions"
    limited = httpx2.post(url, json=_body("json"))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert limited.json() == {"error": {"message": "slow down", "type": "fakellm_error", "code": 429}}
    page = httpx2.post(url, json=_body("html"))
    assert page.status_code == 502 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Bad Gateway</h1>" in page.text


def test_drop_closes_the_stream_without_done(fake: FakeLLM) -> None:
    fake.on("cut", Reply.drop(after_chunks=2, content="abcdefghijklmnop", chunk=3))
    received = b""
    with (
        pytest.raises(httpx2.RemoteProtocolError),
        httpx2.stream("POST", f"{fake.base_url}/chat/completions", json=_body("cut")) as response,
    ):
        for piece in response.iter_bytes():
            received += piece
    assert b'"abc"' in received and b'"def"' in received and b'"ghi"' not in received
    assert b"[DONE]" not in received


def test_raw_reply_sends_bytes_as_they_are(fake: FakeLLM) -> None:
    fake.on("raw", Reply.raw([b"data: {not json\n\n", b"data: [DONE]\n\n"]))
    response = httpx2.post(f"{fake.base_url}/chat/completions", json=_body("raw"))
    assert response.text == "data: {not json\n\ndata: [DONE]\n\n"


def test_hang_notices_the_client_going_away(fake: FakeLLM) -> None:
    fake.on("wait", Reply.hang())
    with pytest.raises(httpx2.ReadTimeout):
        httpx2.post(f"{fake.base_url}/chat/completions", json=_body("wait"), timeout=httpx2.Timeout(0.3))
    gone_at = time.monotonic()
    record = fake.requests[0]
    assert record.wait_finished(3.0)
    assert record.disconnected
    assert record.finished is not None and record.finished - gone_at < 1.5


def test_stopping_does_not_wait_for_hanging_replies() -> None:
    fake = FakeLLM().start()
    fake.on("wait", Reply.hang(), Reply.hang(after_chunks=1))
    errors: list[Exception] = []

    def call() -> None:
        try:
            httpx2.post(f"{fake.base_url}/chat/completions", json=_body("wait"), timeout=30)
        except httpx2.HTTPError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    assert len(fake.wait_for_requests(2)) == 2
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 3.0
    for thread in threads:
        thread.join(5)
    assert len(errors) == 2
    assert all(not r.disconnected for r in fake.requests)


def test_latency_delays_the_first_byte(fake: FakeLLM) -> None:
    fake.on("slow", Reply.text("ok", latency=0.3))
    started = time.monotonic()
    httpx2.post(f"{fake.base_url}/chat/completions", json=_body("slow"))
    assert time.monotonic() - started >= 0.25
    record = fake.requests[0]
    assert record.wait_finished(5)  # the server thread records the end just after the client has the reply
    record = fake.requests[0]
    assert record.finished is not None and record.finished - record.started >= 0.25


def test_a_reply_after_a_condition_waits_for_it_while_other_requests_are_served(fake: FakeLLM) -> None:
    went = threading.Event()
    fake.on("first", Reply.text("after you", chunk=100).after(went.is_set))
    fake.on("second", Reply.text("go"))
    answers: list[str] = []
    waiting = threading.Thread(
        target=lambda: answers.append(httpx2.post(f"{fake.base_url}/chat/completions", json=_body("first")).text)
    )
    waiting.start()
    fake.wait_for_requests(1)
    assert httpx2.post(f"{fake.base_url}/chat/completions", json=_body("second")).status_code == 200
    assert fake.requests[1].wait_finished(5) and answers == []  # the first is still held
    went.set()
    waiting.join(5)
    assert len(answers) == 1 and "after you" in answers[0]
    first, second = fake.requests
    assert second.finished is not None and first.finished is not None and first.finished > second.finished


def test_parallel_requests_each_get_their_own_reply(fake: FakeLLM) -> None:
    for n in range(6):
        fake.on(f"task {n}", Reply.text(f"answer {n}", latency=2.0))  # a wide margin for slow thread starts
    answers: dict[int, str] = {}

    def call(n: int) -> None:
        body = _body(f"task {n}", stream=False)
        answers[n] = httpx2.post(f"{fake.base_url}/chat/completions", json=body).json()["choices"][0]["message"][
            "content"
        ]

    threads = [threading.Thread(target=call, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert answers == {n: f"answer {n}" for n in range(6)}
    records = fake.requests
    assert all(record.wait_finished(5) for record in records)  # the server records the end after replying
    # served concurrently: every request arrived before the first one was answered
    assert max(r.started for r in records) < min(r.finished or 0 for r in records)


def test_requests_record_headers_and_body(fake: FakeLLM) -> None:
    fake.on("hi", Reply.text("ok"))
    httpx2.post(f"{fake.base_url}/chat/completions", json=_body("hi"), headers={"Authorization": "Bearer sk-x"})
    record = fake.requests[0]
    assert record.headers["authorization"] == "Bearer sk-x"
    assert record.body is not None and record.body["model"] == "m"
    assert record.text == "hi" and record.reply is not None and record.reply.content == "ok"


def test_a_storm_answers_matching_requests_for_its_seconds_then_the_rules_again(fake: FakeLLM) -> None:
    fake.storm(0.3, Reply.error(429, "slow down", headers={"Retry-After": "1"}), match="storm me")
    fake.on("storm me", Reply.text("calm"), repeat=True)
    fake.on("other", Reply.text("untouched"))
    url = f"{fake.base_url}/chat/completions"
    assert httpx2.post(url, json=_body("other", stream=False)).status_code == 200  # does not start the storm
    first = httpx2.post(url, json=_body("storm me", stream=False))
    assert first.status_code == 429 and first.headers["retry-after"] == "1"
    time.sleep(0.35)
    assert httpx2.post(url, json=_body("storm me", stream=False)).status_code == 200
    assert [r.rule for r in fake.requests] == [1, STORM, 0]


def test_injected_faults_are_drawn_from_the_seed_and_the_request_not_the_order(fake: FakeLLM) -> None:
    fake.on("q", Reply.text("fine"), repeat=True)
    url = f"{fake.base_url}/chat/completions"

    def statuses(order: list[int]) -> dict[int, list[int]]:
        seen: dict[int, list[int]] = {n: [] for n in order}
        for n in order:
            seen[n].append(httpx2.post(url, json=_body(f"q{n}", stream=False)).status_code)
        return seen

    fake.inject_faults(0.5, [Reply.error(500, "boom")], seed=3)
    forward = statuses([1, 2, 3, 4, 5, 6, 1, 2, 3])
    fake.inject_faults(0.5, [Reply.error(500, "boom")], seed=3)
    fake._bodies_seen.clear()
    backward = statuses([3, 2, 1, 6, 5, 4, 3, 2, 1])
    answered = {status for statuses_of_one in forward.values() for status in statuses_of_one}
    assert forward == backward and answered == {200, 500}
    assert {r.rule for r in fake.requests} <= {0, FAULT}
