"""What a server accepts is learned once per client and shared by everything that sends through it."""

from __future__ import annotations

from paicli.llm.capabilities import Capabilities
from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel


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
