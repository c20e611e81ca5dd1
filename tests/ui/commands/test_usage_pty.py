"""`/model` and `/usage` in the REPL, through a real pseudo-terminal: switching the model changes what is
not routed elsewhere, and `/usage` splits the session's tokens by model and by plan, with their cost and
what prompt caching saved; a cancelled plan's requests count there and in the toolbar."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from paicli.app.figures import arrows, format_tokens
from paicli.common.values import Usage
from paicli.llm.tokens import estimate_prompt
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, SUMMARIZER, plan_json, requests_of, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text
from tests.ui.terminal import Terminal

pytestmark = pytest.mark.pty

ENTER, ESC = "\r", "\x1b"


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


def test_a_plan_cancelled_while_a_task_waits_for_the_server_keeps_every_requests_tokens(
    fake: FakeLLM, terminal: Callable[..., Terminal]
) -> None:
    """Issue 32: after ESC in a plan whose planner had replied, the screen said `↑ 1,771 ↓ 20 tokens` but
    /usage showed the plan at 0 and the toolbar did not move. Every request that reached the server counts:
    the planner's as the server reported it, the cancelled task's (no usage came back) as paicli's estimate of
    its prompt, marked `~`."""
    planned = {"prompt_tokens": 1771, "completion_tokens": 20}
    fake.on(system_is(PLANNER), Reply.text(plan_json({"t1": []}, summary="think it over"), usage=planned))
    fake.on(task_is("t1"), Reply.text("too late", latency=60))  # the server takes its time: ESC comes first
    term = terminal("--no-review", rows=40, columns=100)
    term.wait_for(lambda t: f"{arrows(Usage())} tokens" in t.lines[-1])  # the toolbar, before anything was asked
    term.send("/plan think it over" + ENTER)
    term.wait_for("Enter", timeout=20)
    term.send(ENTER)
    term.wait_for(lambda t: bool(requests_of(fake, "t1")), timeout=20)
    term.send(ESC)
    term.wait_for("plan cancelled", timeout=10)

    (request,) = requests_of(fake, "t1")
    assert request.wait_finished(5) and request.disconnected  # it reached the server and was cut
    assert len(fake.requests) == 2  # the planner's and the task's: nothing else reached the server
    cut = estimate_prompt(request.body["messages"], request.body.get("tools"))  # what paicli counts for it
    prompt, completion = planned["prompt_tokens"] + cut, planned["completion_tokens"]  # nothing streamed: 0 more
    used = Usage(prompt_tokens=prompt, completion_tokens=completion, estimated=True)
    term.wait_for(lambda t: f"{arrows(used)} tokens" in t.lines[-1], timeout=5)  # the toolbar moved
    report = term.text
    assert "○ t1 THINK" in report and format_tokens(cut, True) in report, report  # the cut request's own row
    assert f"{used.prompt_tokens:,} prompt tokens (estimated" in report, report

    term.send("/usage" + ENTER)
    term.wait_for(lambda t: "› /usage" in t.text and "think it over (" in t.text.split("› /usage")[-1], timeout=10)
    shown = term.text.split("› /usage")[-1]
    assert f"session: {arrows(used)} tokens" in shown, shown
    assert f"gpt-4o-mini  ↑ {used.prompt_tokens:,} ↓ {used.completion_tokens:,}" in shown, shown
    (plan_row,) = [line for line in shown.splitlines() if "think it over (" in line]
    assert plan_row.endswith(arrows(used)), shown  # the plan holds all of it
    assert "chat and the rest" not in shown, shown
