"""The estimate shown before approval: model requests and prompt tokens of the tasks still to run, by model,
priced when every model it uses has a price; files sized from the workspace where a task's shape depends
on them (a direct read feeding a dependent, a write that only creates files). How far off it is on a real
run is measured by `bench tokens`."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.common.values import Estimate
from paicli.config import Settings
from paicli.llm.price import Price
from paicli.plan import caps
from paicli.plan.estimate import CLOSING_TOKENS, DEPENDENCY_TOKENS, RAW_TOKENS, REQUESTS, Estimator
from paicli.plan.model import Plan, Task, TaskAction, TaskStatus, TaskType
from paicli.plan.routing import model_for_reviewer, model_for_summarizer, model_for_task


def plan(*tasks: Task) -> Plan:
    return Plan(goal="g", summary="s", tasks=list(tasks))


def test_a_direct_action_costs_no_model_request() -> None:
    estimator = Estimator(fixed_tokens=2_000, closing_fixed_tokens=500)
    direct = Task.model_validate(
        {"id": "r", "description": "read", "type": "FILE_READ", "action": {"tool": "read_file", "args": {"path": "a"}}}
    )
    assert estimator.task(plan(direct), direct) == Estimate()
    closing = 500 + CLOSING_TOKENS
    assert estimator(plan(direct)) == Estimate(
        requests=1, prompt_tokens=closing, prompt_tokens_low=int(closing * 0.7), prompt_tokens_high=int(closing * 1.5)
    )


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


def mixed_plan() -> Plan:
    return Plan(
        goal="tidy the project",
        summary="",
        tasks=[
            Task(id="read", description="read app.py", type=TaskType.FILE_READ),
            Task(id="think", description="decide", type=TaskType.ANALYSIS, dependencies=["read"]),
            Task(
                id="test",
                description="run the tests",
                type=TaskType.VERIFICATION,
                action=TaskAction(tool="execute_command", args={"command": "pytest -q"}),
            ),
            Task(id="old", description="done before", type=TaskType.ANALYSIS, status=TaskStatus.COMPLETED),
        ],
    )


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
    estimate = estimator({})(mixed_plan())
    assert estimate.task_models == {"read": "session", "think": "deep"}  # the direct action has no model
    assert set(estimate.by_model) == {"session", "deep", "writer"}
    assert sum(part.requests for part in estimate.by_model.values()) == estimate.requests == 2 + 1 + 1
    assert sum(part.prompt_tokens for part in estimate.by_model.values()) == estimate.prompt_tokens
    assert estimate.cost is None  # no prices at all


def test_the_estimate_is_priced_only_when_every_model_it_uses_has_a_price() -> None:
    assert estimator(PRICES)(mixed_plan()).cost is None  # "writer" has no price
    priced = estimator({**PRICES, "writer": Price(input=2.0, output=8.0)})(mixed_plan())
    expected = sum(
        part.prompt_tokens * {"session": 1.0, "deep": 10.0, "writer": 2.0}[name] / 1_000_000
        for name, part in priced.by_model.items()
    )
    assert priced.cost == pytest.approx(expected) and priced.cost > 0
    reviewed = estimator({**PRICES, "writer": Price(input=2.0, output=8.0)}, review=True)(mixed_plan())
    assert reviewed.by_model["session"].requests == priced.by_model["session"].requests + 1  # the reviewer
    assert reviewed.cost is not None and reviewed.cost > priced.cost


def test_rounds_add_up_and_an_unpriced_round_makes_the_cost_unknown() -> None:
    full = {**PRICES, "writer": Price(input=2.0, output=8.0)}
    one, two = estimator(full)(mixed_plan()), estimator(full)(mixed_plan())
    assert one.cost is not None and (one + two).cost == pytest.approx(2 * one.cost)
    assert (one + estimator({})(mixed_plan())).cost is None
    assert (one + two).by_model["deep"].requests == 2


def test_an_estimator_without_routes_counts_as_before() -> None:
    estimate = Estimator(fixed_tokens=2_000)(mixed_plan())
    assert estimate.by_model == {} and estimate.task_models == {} and estimate.cost is None
    assert set(estimate.model_dump()) == {
        "requests",
        "prompt_tokens",
        "prompt_tokens_low",
        "prompt_tokens_high",
        "uncalibrated",
    }
    assert estimate.uncalibrated == 2
    assert estimate.prompt_tokens_low < estimate.prompt_tokens < estimate.prompt_tokens_high


# ---- files sized from the workspace ----

FIXED = 2_000


def plan_of(*tasks: Task) -> Plan:
    return Plan(goal="g" * 400, tasks=list(tasks))


def read(id: str, path: str) -> Task:
    return Task(
        id=id, description="d", type=TaskType.FILE_READ, action=TaskAction(tool="read_file", args={"path": path})
    )


def brief_of(estimator: Estimator, plan: Plan, task: Task) -> int:
    """The tokens of the task's brief beyond the fixed part, as the estimate counts them (one request)."""
    return estimator.task(plan, task).prompt_tokens - FIXED


def test_a_direct_read_is_sized_from_its_file(workspace: Path) -> None:
    (workspace / "small.py").write_text("x" * 800)
    (workspace / "big.py").write_text("x" * 100_000)
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)
    plan = plan_of(
        read("s", "small.py"),
        read("b", "big.py"),
        read("m", "missing.py"),
        Task(id="answer", description="d", type=TaskType.ANALYSIS),
        Task(id="a1", description="d", dependencies=["s"]),
        Task(id="a2", description="d", dependencies=["b"]),
        Task(id="a3", description="d", dependencies=["m"]),
        Task(id="a4", description="d", dependencies=["answer"]),
    )
    base = brief_of(estimator, plan, plan.task("answer"))
    assert brief_of(estimator, plan, plan.task("a1")) - base == 1_000 // 4 + 60  # 800 bytes shown as ~1,000 characters
    assert (
        brief_of(estimator, plan, plan.task("a2")) - base == caps.DEPENDENCY_RAW_RESULT // 4 + 60 == RAW_TOKENS
    )  # cut as the brief cuts
    assert brief_of(estimator, plan, plan.task("a3")) - base == RAW_TOKENS  # unknown size: the cap
    assert brief_of(estimator, plan, plan.task("a4")) - base == DEPENDENCY_TOKENS  # a model's answer
    without = Estimator(fixed_tokens=FIXED)  # no workspace: the constants only
    assert brief_of(without, plan, plan.task("a1")) - brief_of(without, plan, plan.task("answer")) == RAW_TOKENS


def test_a_write_that_only_creates_files_takes_one_request(workspace: Path) -> None:
    (workspace / "app.py").write_text("print(1)\n")
    (workspace / "src").mkdir()
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)

    def requests(files: list[str], estimator: Estimator = estimator) -> int:
        task = Task(id="w", description="d", type=TaskType.FILE_WRITE, files=files)
        return estimator.task(plan_of(task), task).requests

    assert requests(["NEW.md", "docs/new.md"]) == 1  # written whole, which ends the task: no read, no answer
    assert requests(["NEW.md", "app.py"]) == 3  # it changes a file that exists: read, change, answer
    assert requests(["src/"]) == 3 and requests(["new_folder/"]) == 3  # a folder may hold files to change
    assert requests(["NEW.md"], Estimator(fixed_tokens=FIXED)) == 3  # nothing known about the workspace


def test_files_are_sized_only_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x" * 800)
    (workspace / "link.py").symlink_to(outside)
    (workspace / "folder").mkdir()
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)
    alone = plan_of(Task(id="a", description="d"))
    base = brief_of(estimator, alone, alone.tasks[0])
    for path in ("link.py", "../outside.py", str(outside), "folder", "/dev/zero"):
        plan = plan_of(read("r", path), Task(id="a", description="d", dependencies=["r"]))
        assert brief_of(estimator, plan, plan.task("a")) - base == RAW_TOKENS, path
