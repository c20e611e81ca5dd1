"""`/model` and `/usage` in the REPL, through a real pseudo-terminal: switching the model changes what is
not routed elsewhere, and `/usage` splits the session's tokens by model and by plan, with their cost and
what prompt caching saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, SUMMARIZER, plan_json, requests_of, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def test_model_switches_what_is_unrouted_and_usage_shows_each_model(
    spawn_repl: Spawn, fake: FakeLLM, home: Path
) -> None:
    with (home / ".paicli" / "config.toml").open("a") as file:
        file.write('[models]\nANALYSIS = "deep-model"\n')
        file.write("[prices.gpt-4o-mini]\ninput = 1\noutput = 2\n[prices.deep-model]\ninput = 10\noutput = 20\n")
        file.write("[prices.other-model]\ninput = 3\noutput = 4\n")
    fake.on("hello", Reply.text("Hi.", usage={"prompt_tokens": 1000, "completion_tokens": 100}))
    plan = plan_json({"scan": [], "judge": ["scan"]}, summary="scan then judge", types={"scan": "FILE_READ"})
    fake.on(system_is(PLANNER), Reply.text(plan, usage={"prompt_tokens": 2000, "completion_tokens": 200}))
    fake.on(task_is("scan"), Reply.text("two modules", usage={"prompt_tokens": 3000, "completion_tokens": 300}))
    fake.on(task_is("judge"), Reply.text("fine", usage={"prompt_tokens": 4000, "completion_tokens": 400}))
    fake.on(
        system_is(SUMMARIZER), Reply.text("Scanned and judged.", usage={"prompt_tokens": 500, "completion_tokens": 50})
    )
    child = spawn_repl("--no-review")
    child.send("hello" + ENTER)
    expect_text(child, "Hi.")
    child.expect_exact(PROMPT)
    child.send("/model other-model" + ENTER)
    expect_text(child, "model switched to other-model")
    child.send("/plan scan and judge" + ENTER)
    expect_text(child, "prompt tokens · ~$")  # the review prices the estimate: each model it uses has a price...
    expect_text(child, "scan then judge")
    expect_text(child, "model deep-model")  # ...and names a routed task's model
    expect_text(child, "Enter")
    child.send(ENTER)
    expect_text(child, "Scanned and judged.", timeout=20)
    child.expect_exact(PROMPT, timeout=10)

    assert fake.requests[0].body is not None and fake.requests[0].body["model"] == "gpt-4o-mini"
    planner = next(r for r in fake.requests if r.body and system_is(PLANNER)(r.body))
    summarizer = next(r for r in fake.requests if r.body and system_is(SUMMARIZER)(r.body))
    assert planner.body["model"] == summarizer.body["model"] == "other-model"  # switched: not routed elsewhere
    assert [r.body["model"] for r in requests_of(fake, "scan")] == ["other-model"]
    assert [r.body["model"] for r in requests_of(fake, "judge")] == ["deep-model"]  # routed: stays

    child.send("/usage" + ENTER)
    expect_text(child, "session: ↑ 10,500 ↓ 1,050 tokens")
    expect_text(child, "deep-model   ↑ 4,000 ↓ 400")
    expect_text(child, "gpt-4o-mini  ↑ 1,000 ↓ 100")
    expect_text(child, "other-model  ↑ 5,500 ↓ 550")  # planner, scan and the summary
    expect_text(child, "scan and judge (")  # the plan, by its goal and saved id...
    expect_text(child, "↑ 9,500 ↓ 950 · 0.0667")  # ...planner, both tasks and the summary
    expect_text(child, "chat and the rest")
    expect_text(child, "↑ 1,000 ↓ 100")
    expect_text(child, "cost: 0.0679 (at the configured prices)")  # 0.0012 + 0.048 + 0.0187


def test_usage_shows_what_prompt_caching_took_and_saved_as_the_server_reported_it(
    spawn_repl: Spawn, fake: FakeLLM, home: Path
) -> None:
    with (home / ".paicli" / "config.toml").open("a") as file:
        file.write("[prices.gpt-4o-mini]\ninput = 1\noutput = 2\ncached_input = 0.25\n")
    cached = {"prompt_tokens_details": {"cached_tokens": 3000}}
    fake.on("first", Reply.text("One.", usage={"prompt_tokens": 4000, "completion_tokens": 10, **cached}))
    fake.on("second", Reply.text("Two.", usage={"prompt_tokens": 5000, "completion_tokens": 20, **cached}))
    child = spawn_repl()
    for question, answer in (("first", "One."), ("second", "Two.")):
        child.send(question + ENTER)
        expect_text(child, answer)
        child.expect_exact(PROMPT)
    child.send("/usage" + ENTER)
    expect_text(child, "session: ↑ 9,000 ↓ 30 tokens")  # the sums of the two `usage` events
    expect_text(child, "gpt-4o-mini  ↑ 9,000 ↓ 30 (6,000 cached) · 0.0046")  # 3,000 × 1 + 6,000 × 0.25 + 30 × 2
    expect_text(child, "prompt caching: 6,000 of 9,000 prompt tokens came from the provider's cache (67%)")
    expect_text(child, "saved 0.0045 at the configured prices")  # 6,000 × 0.75 per million
