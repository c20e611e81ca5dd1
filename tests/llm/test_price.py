"""What usage costs: priced from its split by model, and only when all of it can be priced."""

from __future__ import annotations

import pytest

from paicli.common.values import Usage
from paicli.llm.price import Price, cost_of

PRICES = {"chat": Price(input=0.27, output=1.10), "reasoner": Price(input=0.55, output=2.19)}


def test_usage_is_priced_per_model() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=100_000).of_model("chat") + Usage(
        prompt_tokens=200_000, completion_tokens=50_000
    ).of_model("reasoner")
    assert usage.by_model["chat"].prompt_tokens == 1_000_000
    assert cost_of(usage, PRICES) == pytest.approx(0.27 + 0.11 + 0.11 + 0.1095)


def test_a_model_without_a_price_or_tokens_of_no_known_model_make_the_cost_unknown() -> None:
    assert cost_of(Usage(prompt_tokens=10).of_model("other"), PRICES) is None
    assert cost_of(Usage(prompt_tokens=10), PRICES) is None  # nobody knows which model
    assert cost_of(Usage(prompt_tokens=10).of_model("chat") + Usage(completion_tokens=5), PRICES) is None
    assert cost_of(Usage(), PRICES) == 0.0


def test_by_model_is_written_only_when_known() -> None:
    assert Usage(prompt_tokens=3, completion_tokens=1).model_dump() == {"prompt_tokens": 3, "completion_tokens": 1}
    assert Usage(prompt_tokens=3).of_model("chat").model_dump() == {
        "prompt_tokens": 3,
        "completion_tokens": 0,
        "by_model": {"chat": {"prompt_tokens": 3, "completion_tokens": 0}},
    }


def test_cached_prompt_tokens_are_kept_per_model_and_priced_at_cached_input_when_given() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=0, cached_tokens=600_000).of_model("chat")
    assert usage.by_model["chat"].cached_tokens == 600_000
    assert usage.model_dump()["by_model"]["chat"]["cached_tokens"] == 600_000
    assert cost_of(usage, {"chat": Price(input=1.0)}) == pytest.approx(1.0)  # no cached price: all at input
    cheap = {"chat": Price(input=1.0, cached_input=0.1)}
    assert cost_of(usage, cheap) == pytest.approx(0.4 + 0.06)
    assert cheap["chat"].saved(600_000) == pytest.approx(0.54)
