"""What `/usage` reports: tokens per model and per plan, their cost, and what prompt caching took and saved."""

from __future__ import annotations

from paicli.common.values import Usage
from paicli.llm.price import Price
from paicli.ui.commands.usage_view import PlanUsage, usage_report

PRICES = {"chat": Price(input=0.27, output=1.10), "reasoner": Price(input=0.55, output=2.19)}


def test_tokens_per_model_with_their_cost_and_the_total_cost_only_when_every_model_has_a_price() -> None:
    one = Usage(prompt_tokens=1_200, completion_tokens=30).of_model("chat")
    assert usage_report(one, [], {}) == ["session: ↑ 1,200 ↓ 30 tokens", "  chat  ↑ 1,200 ↓ 30"]
    assert usage_report(one, [], PRICES) == [
        "session: ↑ 1,200 ↓ 30 tokens",
        "  chat  ↑ 1,200 ↓ 30 · 0.0004",
        "cost: 0.0004 (at the configured prices)",
    ]
    two = one + Usage(prompt_tokens=2_000_000, completion_tokens=1_000_000).of_model("reasoner")
    assert usage_report(two, [], PRICES) == [
        "session: ↑ 2,001,200 ↓ 1,000,030 tokens",
        "  chat      ↑ 1,200 ↓ 30 · 0.0004",
        "  reasoner  ↑ 2,000,000 ↓ 1,000,000 · 3.29",
        "cost: 3.29 (at the configured prices)",
    ]
    assert usage_report(two, [], {"chat": PRICES["chat"]})[-1] == "  reasoner  ↑ 2,000,000 ↓ 1,000,000"  # no cost


def test_tokens_per_plan_and_what_was_spent_outside_plans() -> None:
    chat = Usage(prompt_tokens=100, completion_tokens=10).of_model("chat")
    plan = Usage(prompt_tokens=5_000, completion_tokens=500).of_model("chat")
    report = usage_report(chat + plan, [PlanUsage("add a --verbose flag", plan, "add-verbose")], PRICES)
    assert report[2:5] == [
        "plans:",
        "  add a --verbose flag (add-verbose)  ↑ 5,000 ↓ 500 · 0.0019",
        "  chat and the rest                   ↑ 100 ↓ 10",
    ]


def test_prompt_caching_shows_its_share_and_what_it_saved_with_a_cached_price() -> None:
    usage = Usage(prompt_tokens=10_000, completion_tokens=100, cached_tokens=8_000).of_model("chat")
    plain = usage_report(usage, [], {})
    assert plain[1] == "  chat  ↑ 10,000 ↓ 100 (8,000 cached)"
    assert plain[-1] == (
        "prompt caching: 8,000 of 10,000 prompt tokens came from the provider's cache (80%)"
        ' · a cached_input price in [prices."MODEL"] shows what that saved'
    )
    priced = {"chat": Price(input=1.0, output=2.0, cached_input=0.1)}
    report = usage_report(usage, [], priced)
    assert report[-1].endswith("(80%) · saved 0.0072 at the configured prices")  # 8,000 × 0.9 per million
    assert report[-2] == "cost: 0.0030 (at the configured prices)"  # 2,000 × 1 + 8,000 × 0.1 + 100 × 2
