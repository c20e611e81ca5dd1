"""Usage is never silently zero: what a server leaves out is estimated, marked, and counts toward budgets."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from paicli.app.figures import format_tokens, usage_line
from paicli.common.errors import BudgetExceeded
from paicli.common.values import Usage
from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel
from paicli.llm.sse import ReplyAssembler
from paicli.llm.tokens import estimate_prompt, estimate_text
from tests.fakellm import FakeLLM, Reply
from tests.replay import recorded_stream

USER = [{"role": "user", "content": "Say hello to the world, please."}]


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    llm = LLMClient(base_url=fake.base_url, api_key="sk-test-usage-0001", model="smollm2", backoff_base=0.01)
    yield llm
    await llm.aclose()


def test_the_rule_counts_four_ascii_characters_a_token_and_one_per_other_character() -> None:
    assert [estimate_text(text) for text in ("", "abcd", "abcde", "你好", "ab你")] == [0, 1, 2, 2, 2]
    # each message adds 4, the request 3, tool schemas their compact JSON
    assert estimate_prompt([{"role": "user", "content": "abcd"}]) == 3 + 4 + 1
    tools = [{"type": "function", "function": {"name": "x"}}]
    assert estimate_prompt([], tools) == 3 + estimate_text('[{"type":"function","function":{"name":"x"}}]')


async def test_the_recorded_llamacpp_stream_has_no_usage_so_it_is_estimated(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", recorded_stream("llamacpp-stream-text.sse"))
    response = await client.chat(USER)
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}  # asked for, never sent
    assert response.content.startswith("Hello,") and response.finish_reason == "stop"
    usage = response.usage
    assert usage.estimated
    assert usage.prompt_tokens == estimate_prompt(USER)
    assert usage.completion_tokens == estimate_text(response.content) > 0
    assert usage.model_dump() == {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "by_model": {"smollm2": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}},
        "estimated": True,
    }


async def test_reported_usage_is_taken_as_is_and_not_marked(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("hi", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    usage = (await client.chat(USER)).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (12, 3, False)
    tokens = {"prompt_tokens": 12, "completion_tokens": 3}
    assert usage.model_dump() == {**tokens, "by_model": {"smollm2": tokens}}


async def test_a_missing_part_alone_is_estimated(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("a reply with words", usage={"prompt_tokens": 40, "completion_tokens": 0}))
    usage = (await client.chat(USER)).usage
    assert usage.prompt_tokens == 40 and usage.completion_tokens == estimate_text("a reply with words")
    assert usage.estimated


async def test_the_budget_trips_on_estimated_usage(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.text("word " * 200, usage=False), repeat=True)
    meter = MeteredModel(client, budget=200)
    await meter.chat(USER)
    assert meter.usage.estimated and meter.usage.total >= 200
    with pytest.raises(BudgetExceeded, match="budget spent"):
        await meter.chat(USER)
    assert len(fake.requests) == 1


async def test_tool_calls_without_usage_count_their_arguments(fake: FakeLLM, client: LLMClient) -> None:
    fake.on("hello", Reply.tool_calls([("read_file", {"path": "src/app.py"})], usage=False))
    usage = (await client.chat(USER)).usage
    assert usage.estimated and usage.completion_tokens == estimate_text("read_file") + estimate_text(
        '{"path": "src/app.py"}'
    )


@pytest.mark.parametrize(
    "reported",
    [
        {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 80}},
        {"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 80, "prompt_cache_miss_tokens": 20},
        {"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 80},
    ],
    ids=["openai", "deepseek", "kimi"],
)
def test_cached_prompt_tokens_are_read_in_every_spelling(reported: dict[str, object]) -> None:
    assembler = ReplyAssembler()
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}], "usage": reported})
    assert assembler.result().usage.cached_tokens == 80


def test_sums_keep_the_mark_and_the_cache() -> None:
    exact = Usage(prompt_tokens=10, completion_tokens=2, cached_tokens=4)
    guessed = Usage(prompt_tokens=5, completion_tokens=1, estimated=True)
    total = exact + guessed + exact
    assert (total.prompt_tokens, total.completion_tokens, total.cached_tokens, total.estimated) == (25, 5, 8, True)
    assert not (exact + exact).estimated


def test_estimated_figures_are_shown_with_a_tilde() -> None:
    guessed = Usage(prompt_tokens=1234, completion_tokens=56, estimated=True)
    assert usage_line(guessed).startswith("↑ ~1.2k ↓ ~56 tokens") and "estimated" in usage_line(guessed)
    assert usage_line(Usage(prompt_tokens=1234, completion_tokens=56)) == "↑ 1,234 ↓ 56 tokens"
    assert format_tokens(12_300, estimated=True) == "~12.3k tok" and format_tokens(532) == "532 tok"
