"""What a plan is expected to cost before it runs: requests and prompt tokens, by model, priced when every
model it uses has a price."""

from __future__ import annotations

import pytest

from paicli.config import Settings
from paicli.llm.price import Price
from paicli.plan.estimate import Estimator
from paicli.plan.model import Plan, Task, TaskAction, TaskStatus, TaskType
from paicli.plan.routing import model_for_reviewer, model_for_summarizer, model_for_task


def plan() -> Plan:
    return Plan(
        goal="tidy the project",
        summary="",
        tasks=[
            Task(id="read", description="read app.py", type=TaskType.FILE_READ),
            Task(id="think", description="decide", type=TaskType.ANALYSIS, dependencies=["read"]),
            Task(id="test", description="run the tests", type=TaskType.VERIFICATION,
                 action=TaskAction(tool="execute_command", args={"command": "pytest -q"})),
            Task(id="old", description="done before", type=TaskType.ANALYSIS, status=TaskStatus.COMPLETED),
        ],
    )  # fmt: skip


def estimator(prices: dict[str, Price], *, review: bool = False) -> Estimator:
    s = Settings(model="session", models={"ANALYSIS": "deep"}, summarizer_model="writer")
    return Estimator(
        fixed_tokens=2_000,
        review=review,
        route=lambda kind: model_for_task(s, kind),
        summarizer_model=model_for_summarizer(s),
        reviewer_model=model_for_reviewer(s),
        prices=prices,
    )


PRICES = {"session": Price(input=1.0, output=4.0), "deep": Price(input=10.0, output=40.0)}


def test_the_estimate_names_the_model_of_each_task_and_splits_by_model() -> None:
    estimate = estimator({})(plan())
    assert estimate.task_models == {"read": "session", "think": "deep"}  # the direct action has no model
    assert set(estimate.by_model) == {"session", "deep", "writer"}
    assert sum(part.requests for part in estimate.by_model.values()) == estimate.requests == 2 + 1 + 1
    assert sum(part.prompt_tokens for part in estimate.by_model.values()) == estimate.prompt_tokens
    assert estimate.cost is None  # no prices at all


def test_the_estimate_is_priced_only_when_every_model_it_uses_has_a_price() -> None:
    assert estimator(PRICES)(plan()).cost is None  # "writer" has no price
    priced = estimator({**PRICES, "writer": Price(input=2.0, output=8.0)})(plan())
    expected = sum(
        part.prompt_tokens * {"session": 1.0, "deep": 10.0, "writer": 2.0}[name] / 1_000_000
        for name, part in priced.by_model.items()
    )
    assert priced.cost == pytest.approx(expected) and priced.cost > 0
    reviewed = estimator({**PRICES, "writer": Price(input=2.0, output=8.0)}, review=True)(plan())
    assert reviewed.by_model["session"].requests == priced.by_model["session"].requests + 1  # the reviewer
    assert reviewed.cost is not None and reviewed.cost > priced.cost


def test_rounds_add_up_and_an_unpriced_round_makes_the_cost_unknown() -> None:
    full = {**PRICES, "writer": Price(input=2.0, output=8.0)}
    one, two = estimator(full)(plan()), estimator(full)(plan())
    assert one.cost is not None and (one + two).cost == pytest.approx(2 * one.cost)
    assert (one + estimator({})(plan())).cost is None
    assert (one + two).by_model["deep"].requests == 2


def test_an_estimator_without_routes_counts_as_before() -> None:
    estimate = Estimator(fixed_tokens=2_000)(plan())
    assert estimate.by_model == {} and estimate.task_models == {} and estimate.cost is None
    assert estimate.model_dump() == {"requests": 4, "prompt_tokens": estimate.prompt_tokens}
