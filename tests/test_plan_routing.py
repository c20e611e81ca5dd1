"""Model routing end to end: `paicli plan --yes --json` in a subprocess against the fake server; every
request names the model its role and task type route it to, and usage and the estimate come back by model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, SUMMARIZER, plan_json, requests_of, system_is, task_is

ROUTES = """
planner_model = "plan-model"
executor_model = "exec-model"

[models]
analysis = "deep-model"
"""
PRICES = """
[prices.exec-model]
input = 0.27
output = 1.10

[prices.deep-model]
input = 0.55
output = 2.19
"""
SESSION_PRICE = "[prices.cli-model]\ninput = 0.1\noutput = 0.2\n"


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


def routed_plan(fake: FakeLLM, workspace: Path, home: Path, config: str) -> Finished:
    with (home / ".paicli" / "config.toml").open("a") as file:
        file.write(config)
    plan = plan_json({"look": [], "think": ["look"]}, types={"look": "FILE_READ", "think": "ANALYSIS"})
    fake.on(system_is(PLANNER), Reply.text(plan, usage=usage(100, 10)))
    fake.on(task_is("look"), Reply.text("app.py has 3 functions", usage=usage(200, 20)))
    fake.on(task_is("think"), Reply.text("split it", usage=usage(300, 30)))
    fake.on(system_is(SUMMARIZER), Reply.text("Looked and thought.", usage=usage(50, 5)))
    args = ["-C", str(workspace), "--model", "cli-model", "plan", "look and think", "--yes", "--json"]
    return run_paicli(args, paicli_env(fake, home))


def test_each_request_names_its_routed_model_and_usage_comes_back_by_model(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    done = routed_plan(fake, workspace, home, ROUTES + PRICES + SESSION_PRICE)
    assert done.code == 0, done.stderr
    planner = [r for r in fake.requests if r.body and system_is(PLANNER)(r.body)]
    summarizer = [r for r in fake.requests if r.body and system_is(SUMMARIZER)(r.body)]
    assert [r.body["model"] for r in planner] == ["plan-model"]  # planner_model
    assert [r.body["model"] for r in requests_of(fake, "look")] == ["exec-model"]  # FILE_READ: executor_model
    assert [r.body["model"] for r in requests_of(fake, "think")] == ["deep-model"]  # [models] ANALYSIS
    assert [r.body["model"] for r in summarizer] == ["cli-model"]  # unrouted: the session model (--model)

    finished = done.of("plan_finished")[0]
    assert finished["usage"] == {
        **usage(650, 65),
        "by_model": {
            "plan-model": usage(100, 10),
            "exec-model": usage(200, 20),
            "deep-model": usage(300, 30),
            "cli-model": usage(50, 5),
        },
    }
    per_request = [e["usage"]["by_model"] for e in done.of("usage")]
    assert {"exec-model": usage(200, 20)} in per_request and {"deep-model": usage(300, 30)} in per_request

    estimate = finished["estimate"]
    assert estimate["task_models"] == {"look": "exec-model", "think": "deep-model"}
    assert set(estimate["by_model"]) == {"exec-model", "deep-model", "cli-model"}  # the summary: session model
    prices = {"exec-model": 0.27, "deep-model": 0.55, "cli-model": 0.1}
    expected = sum(part["prompt_tokens"] * prices[name] for name, part in estimate["by_model"].items()) / 1e6
    assert estimate["cost"] == pytest.approx(expected) and estimate["cost"] > 0


def test_without_a_price_for_every_model_the_estimate_has_no_cost(fake: FakeLLM, workspace: Path, home: Path) -> None:
    done = routed_plan(fake, workspace, home, ROUTES + PRICES)  # no price for the summarizer's cli-model
    assert done.code == 0, done.stderr
    estimate = done.of("plan_finished")[0]["estimate"]
    assert "cost" not in estimate and estimate["requests"] == 2 + 1 + 1


def test_a_bad_models_table_is_a_configuration_error(fake: FakeLLM, workspace: Path, home: Path) -> None:
    done = routed_plan(fake, workspace, home, '[models]\nREVIEWING = "x"\n')
    assert done.code == 2
    assert "unknown task type 'REVIEWING'" in done.stderr and "VERIFICATION" in done.stderr
    assert fake.requests == []
