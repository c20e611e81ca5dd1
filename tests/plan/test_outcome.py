"""How a plan ended → one message and one exit code, for every front end."""

from __future__ import annotations

import pytest

from paicli.plan.model import Plan, PlanStatus, Task
from paicli.plan.outcome import PlanOutcome

PLAN = Plan(goal="g", tasks=[Task(id="t", description="d")])


@pytest.mark.parametrize(
    ("outcome", "code", "message"),
    [
        (PlanOutcome(PlanStatus.COMPLETED, PLAN, summary="done"), 0, None),
        (PlanOutcome.cancelled(PLAN), 130, "plan cancelled"),
        (PlanOutcome.cancelled(), 130, "plan cancelled"),
        (PlanOutcome(PlanStatus.FAILED, PLAN, failure="t failed: boom"), 1, "plan failed: t failed: boom"),
        (PlanOutcome(PlanStatus.FAILED, None, failure="the model sent no plan"), 1, "the model sent no plan"),
        (PlanOutcome(PlanStatus.FAILED, None, failure="bad setting", configuration=True), 2, "bad setting"),
    ],
)
def test_each_outcome_has_one_exit_code_and_message(outcome: PlanOutcome, code: int, message: str | None) -> None:
    assert outcome.exit_code() == code
    assert outcome.message() == message
