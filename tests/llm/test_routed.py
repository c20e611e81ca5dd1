"""RoutedModel: requests through it name its model, and still count in the meter they pass."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel
from paicli.llm.routed import RoutedModel
from tests.fakellm import FakeLLM, Reply

USER = [{"role": "user", "content": "hello"}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        server.on("hello", Reply.text("hi", usage={"prompt_tokens": 10, "completion_tokens": 1}), repeat=True)
        yield server


async def test_routed_requests_name_their_model_and_the_meter_counts_each(fake: FakeLLM) -> None:
    client = LLMClient(base_url=fake.base_url, api_key="sk-test-key", model="session-model")
    meter = MeteredModel(client)
    try:
        await RoutedModel(meter, "task-model").chat(USER)
        await RoutedModel(meter, None).chat(USER)  # unrouted: the client's model...
        client.model = "switched-model"  # ...which /model switches
        await RoutedModel(meter, None).chat(USER)
        await RoutedModel(meter, "task-model").chat(USER, model="explicit-model")  # the caller's own wins
    finally:
        await client.aclose()
    names = [r.body["model"] for r in fake.requests if r.body]
    assert names == ["task-model", "session-model", "switched-model", "explicit-model"]
    assert meter.requests == 4 and meter.usage.prompt_tokens == 40
    assert {name: t.prompt_tokens for name, t in meter.usage.by_model.items()} == {
        "task-model": 10,
        "session-model": 10,
        "switched-model": 10,
        "explicit-model": 10,
    }
