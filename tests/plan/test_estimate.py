"""The estimate shown before approval: model requests and prompt tokens of the tasks still to run."""

from __future__ import annotations

from paicli.llm.types import Estimate
from paicli.plan.estimate import CLOSING_TOKENS, REQUESTS, Estimator, Price
from paicli.plan.model import Plan, Task, TaskStatus, TaskType


def plan(*tasks: Task) -> Plan:
    return Plan(goal="g", summary="s", tasks=list(tasks))


def test_a_direct_action_costs_no_model_request() -> None:
    estimator = Estimator(fixed_tokens=2_000, closing_fixed_tokens=500)
    direct = Task.model_validate(
        {"id": "r", "description": "read", "type": "FILE_READ", "action": {"tool": "read_file", "args": {"path": "a"}}}
    )
    assert estimator.task(plan(direct), direct) == Estimate()
    assert estimator(plan(direct)) == Estimate(requests=1, prompt_tokens=500 + CLOSING_TOKENS)


def test_model_tasks_cost_their_types_requests_and_grow_with_each_step() -> None:
    estimator = Estimator(fixed_tokens=2_000)
    write = Task(id="w", description="x" * 400, type=TaskType.FILE_WRITE, files=["a.py"])
    analysis = Task(id="a", description="x" * 400, type=TaskType.ANALYSIS)
    one_write = estimator.task(plan(write), write)
    one_analysis = estimator.task(plan(analysis), analysis)
    assert one_write.requests == REQUESTS[TaskType.FILE_WRITE] == 3
    assert one_analysis.requests == 1
    assert one_write.prompt_tokens > 3 * one_analysis.prompt_tokens  # later steps carry earlier ones
    with_dependency = Task(id="w2", description="x" * 400, type=TaskType.FILE_WRITE, dependencies=["a"])
    assert estimator.task(plan(analysis, with_dependency), with_dependency).prompt_tokens > one_write.prompt_tokens


def test_only_pending_tasks_count_and_a_review_adds_a_closing_request() -> None:
    done = Task(id="d", description="done", type=TaskType.ANALYSIS, status=TaskStatus.COMPLETED)
    todo = Task(id="t", description="todo", type=TaskType.ANALYSIS)
    without = Estimator(fixed_tokens=1_000)(plan(done, todo))
    assert without.requests == 1 + 1  # the task, the summary
    reviewed = Estimator(fixed_tokens=1_000, review=True)(plan(done, todo))
    assert reviewed.requests == 1 + 2
    assert reviewed.prompt_tokens > without.prompt_tokens


def test_a_price_is_per_million_tokens() -> None:
    assert abs(Price(input=0.27, output=1.10).cost(1_000_000, 500_000) - 0.82) < 1e-9
    assert Price(input=2.0).cost(250_000) == 0.5
