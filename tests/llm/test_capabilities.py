"""What a server accepts is learned once per client and shared by everything that sends through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paicli.common.errors import UnsupportedRequest
from paicli.common.events import ListSink, Notice
from paicli.llm.capabilities import Capabilities
from paicli.llm.capability_store import CapabilityStore, Learned
from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel
from paicli.llm.rejections import rejected_field
from tests.fakellm import FakeLLM, Reply, any_request
from tests.replay import recorded_http, recording


def test_a_rejected_field_is_recorded_once() -> None:
    capabilities = Capabilities(lambda: "m")
    assert capabilities.accepts("temperature")
    assert capabilities.reject("temperature") is True
    assert capabilities.reject("temperature") is False  # already known: the client does not retry for it
    assert not capabilities.accepts("temperature") and capabilities.accepts("stream_options")


def test_plan_formats_are_remembered_per_model_and_follow_the_default_model() -> None:
    current = ["small"]
    capabilities = Capabilities(lambda: current[0])
    capabilities.remember_plan_format(1)
    assert capabilities.plan_format() == 1 and capabilities.plan_format("small") == 1
    current[0] = "big"  # /model switched the session's model: nothing is known of the new one
    assert capabilities.plan_format() == 0
    capabilities.remember_plan_format(2, "reasoner")
    assert capabilities.plan_format("reasoner") == 2 and capabilities.plan_format() == 0


async def test_wrappers_share_their_clients_capabilities_and_clients_do_not_share() -> None:
    first = LLMClient(base_url="http://127.0.0.1:9", api_key="k", model="m")
    second = LLMClient(base_url="http://127.0.0.1:9", api_key="k", model="m")
    try:
        assert MeteredModel(MeteredModel(first)).capabilities is first.capabilities
        first.capabilities.reject("temperature")
        assert second.capabilities.accepts("temperature")
        first.model = "other"
        first.capabilities.remember_plan_format(1)
        assert first.capabilities.plan_format("other") == 1 and first.capabilities.plan_format("m") == 0
    finally:
        await first.aclose()
        await second.aclose()


# ---- remembered across runs -----------------------------------------------------------------------


def test_the_store_keys_by_base_url_and_model_without_credentials(tmp_path: Path) -> None:
    store = CapabilityStore(tmp_path / "capabilities.json", clock=lambda: 1000.0)
    store.save("https://user:secret@api.example.com/v1/", "m", Learned(rejected={"temperature"}, plan_format=1))
    text = (tmp_path / "capabilities.json").read_text()
    assert "secret" not in text and "https://api.example.com/v1 m" in text
    loaded = store.load("https://api.example.com/v1", "m")
    assert loaded is not None and loaded.rejected == {"temperature"} and loaded.plan_format == 1
    assert loaded.updated == 1000.0
    assert store.load("https://api.example.com/v1", "other") is None
    assert store.load("http://127.0.0.1:8080/v1", "m") is None
    assert oct((tmp_path / "capabilities.json").stat().st_mode & 0o777) == "0o600"


def test_old_entries_are_forgotten_and_clear_forgets_everything(tmp_path: Path) -> None:
    now = [1000.0]
    store = CapabilityStore(tmp_path / "capabilities.json", max_age=100, clock=lambda: now[0])
    store.save("http://h/v1", "m", Learned(rejected={"stream_options"}))
    now[0] = 1099.0
    assert store.load("http://h/v1", "m") is not None
    now[0] = 1101.0
    assert store.load("http://h/v1", "m") is None  # servers get upgraded
    assert store.clear() is True and store.clear() is False


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"entries": [1]}', b'{"entries": {"x": 1}}', b"[" * 100_000, b" " * 1_100_000],
)
def test_a_damaged_store_counts_as_empty_and_is_rewritten(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "capabilities.json"
    path.write_bytes(content)
    store = CapabilityStore(path)
    assert store.load("http://h/v1", "m") is None
    store.save("http://h/v1", "m", Learned(rejected={"tools"}))
    loaded = store.load("http://h/v1", "m")
    assert loaded is not None and loaded.rejected == {"tools"}


def test_capabilities_load_lazily_and_write_through(tmp_path: Path) -> None:
    store = CapabilityStore(tmp_path / "capabilities.json")
    first = Capabilities(lambda: "m", base_url="http://h/v1", store=store)
    first.reject("response_format.json_schema")
    first.remember_plan_format(1)
    first.reject("temperature", "other-model")
    second = Capabilities(lambda: "m", base_url="http://h/v1", store=store)  # the next run
    assert not second.accepts("response_format.json_schema") and second.plan_format() == 1
    assert second.accepts("temperature") and not second.accepts("temperature", "other-model")
    assert Capabilities(lambda: "m", base_url="http://elsewhere/v1", store=store).plan_format() == 0


# ---- recognising a refusal from the body --------------------------------------------------------------

SCHEMA = {"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {}}}
LLAMACPP_500 = json.loads(recording("llamacpp-json-schema-rejected.http").partition(b"\n\n")[2])["error"]["message"]


@pytest.mark.parametrize(
    ("status", "message", "body", "field"),
    [
        (500, LLAMACPP_500, SCHEMA, "response_format.json_schema"),
        (
            400,
            "response_format json_object is not supported",
            {"response_format": {"type": "json_object"}},
            "response_format.json_object",
        ),
        (
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'"
            " instead.",
            {"max_tokens": 5},
            "max_tokens",
        ),
        (
            400,
            "Unsupported value: 'temperature' does not support 0.2 with this model.",
            {"temperature": 0.2},
            "temperature",
        ),
        (422, "Extra inputs are not permitted: body.stream_options", {"stream_options": {}}, "stream_options"),
        (
            500,
            "unrecognized request argument: parallel_tool_calls",
            {"parallel_tool_calls": True},
            "parallel_tool_calls",
        ),
        (400, "registry.ollama.ai/library/gemma:2b does not support tools", {"tools": [{}]}, "tools"),
        (
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            {"tools": [{}]},
            "tools",
        ),
        (
            400,
            "The reasoning_content in the thinking mode must be passed back to the API.",
            {"messages": []},
            "reasoning.required",
        ),
        (
            400,
            "reasoning_content is not allowed in input messages",
            {"messages": [{"role": "assistant", "reasoning_content": "hm"}]},
            "reasoning.refused",
        ),
    ],
)
def test_a_refusal_is_read_from_the_body(status: int, message: str, body: dict[str, Any], field: str) -> None:
    assert rejected_field(status, message, body) == field


@pytest.mark.parametrize(
    ("status", "message", "body"),
    [
        (500, "CUDA out of memory while running with temperature 0.2", {"temperature": 0.2}),  # a crash, no refusal
        (401, "invalid api key for tools", {"tools": [{}]}),  # about something else
        (429, "rate limit on response_format requests", SCHEMA),
        (400, "temperature must be at most 2", {}),  # not sent: not ours to drop
        (400, "tool_calls must be followed by tool messages", {"tools": [{}]}),  # `tools` not named as a word
    ],
)
def test_other_errors_are_not_taken_for_refusals(status: int, message: str, body: dict[str, Any]) -> None:
    assert rejected_field(status, message, body) is None


async def test_the_recorded_500_is_recognised_on_the_first_reply_and_never_retried(fake: FakeLLM) -> None:
    fake.on(any_request, recorded_http("llamacpp-json-schema-rejected.http"), repeat=True)
    sink = ListSink()
    llm = LLMClient(base_url=fake.base_url, api_key="sk-test-caps-0001", model="smollm2", sink=sink)
    try:
        with pytest.raises(UnsupportedRequest) as caught:
            await llm.chat([{"role": "user", "content": "plan"}], response_format=SCHEMA["response_format"])
    finally:
        await llm.aclose()
    assert len(fake.requests) == 1
    assert caught.value.status == 500 and caught.value.field == "response_format.json_schema"
    assert "Input should be 'text' or 'json_object'" in str(caught.value)
    assert not any("retrying" in e.message for e in sink.events if isinstance(e, Notice))
    assert not llm.capabilities.accepts("response_format.json_schema")


async def test_a_field_the_client_adds_is_dropped_at_once_even_on_a_500(fake: FakeLLM) -> None:
    fake.on(lambda body: "stream_options" in body, Reply.error(500, "validation error: stream_options: extra inputs"))
    fake.on(any_request, Reply.text("fine"))
    llm = LLMClient(base_url=fake.base_url, api_key="sk-test-caps-0001", model="m", backoff_base=5.0)
    try:
        response = await llm.chat([{"role": "user", "content": "hi"}])
    finally:
        await llm.aclose()
    assert response.content == "fine"  # no backoff of 5 s happened: the second request went at once
    assert ["stream_options" in (r.body or {}) for r in fake.requests] == [True, False]
