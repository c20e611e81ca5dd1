"""The estimate calibrated from what this server and model actually used (issue 32): per task type,
remembered per endpoint with the capabilities, with a range that says how sure it is."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_plan
from paicli.common.events import ListSink, PlanFinished
from paicli.common.values import Estimate
from paicli.config import Settings
from paicli.llm.capabilities import Capabilities
from paicli.llm.capability_store import MAX_SAMPLES, CapabilityStore
from paicli.plan.calibration import MIN_SAMPLES, UNCALIBRATED, Factor, Prediction, factor_of, kind_of, learn
from paicli.plan.estimate import Estimator
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.runtime import Runtime, build_runtime
from tests.conftest import TEST_KEY
from tests.fakellm import Body, FakeLLM, Reply, all_of
from tests.plan_script import PLANNER, SUMMARIZER, system_is, task_is


def test_without_samples_the_rule_stands_with_a_wide_range() -> None:
    assert factor_of([]) == Factor(1.0, 1.0, *UNCALIBRATED, samples=0)


def test_the_factor_weighs_tasks_by_size_and_the_range_is_how_far_single_tasks_strayed() -> None:
    samples = [(2, 1, 10_000, 3_000), (2, 1, 10_000, 4_000), (1, 1, 1_000, 500)]  # a model cheaper than the rule
    found = factor_of(samples)
    assert found.samples == MIN_SAMPLES and found.requests == pytest.approx(3 / 5)
    assert found.tokens == pytest.approx(7_500 / 21_000)
    assert (found.low, found.high) == (pytest.approx(0.3), pytest.approx(0.5))
    few = factor_of(samples[:1])  # one sample: the factor, widened
    assert few.tokens == pytest.approx(0.3) and few.low < 0.3 < few.high


def test_a_calibrated_estimate_scales_the_rule_and_gives_its_range() -> None:
    plan = Plan(goal="g", tasks=[Task(id="t", description="look", type=TaskType.FILE_READ)])
    rule = Estimator(fixed_tokens=2_000).task(plan, plan.tasks[0])
    calibrated = Estimator(fixed_tokens=2_000, factor=lambda model, kind: Factor(1.5, 0.5, 0.4, 0.7, samples=5))
    estimate = calibrated.task(plan, plan.tasks[0])
    assert estimate.requests == 3 and estimate.prompt_tokens == round(rule.prompt_tokens * 0.5)
    low, high = estimate.prompt_tokens_low, estimate.prompt_tokens_high
    assert low == int(rule.prompt_tokens * 0.4) and abs(high - rule.prompt_tokens * 0.7) <= 1
    assert estimate.uncalibrated == 0 and rule.uncalibrated == 1
    assert Estimate.model_validate(json.loads(json.dumps(estimate.model_dump()))) == estimate


def test_only_tasks_that_completed_in_this_run_are_learned_from() -> None:
    def task(id: str, status: TaskStatus, requests: int, **extra: object) -> Task:
        made = Task.model_validate({"id": id, "description": id, "type": "ANALYSIS", "status": status, **extra})
        made.requests, made.usage.prompt_tokens = requests, 900
        return made

    plan = Plan(
        goal="g",
        tasks=[
            task("ran", TaskStatus.COMPLETED, 2),
            task("failed", TaskStatus.FAILED, 5),
            task("saved", TaskStatus.COMPLETED, 2, from_saved=True),
            task("direct", TaskStatus.COMPLETED, 0),  # a direct action made no request
            task("unpredicted", TaskStatus.COMPLETED, 1),
        ],
    )
    predictions = {t.id: Prediction("m", "ANALYSIS", 1, 1_000) for t in plan.tasks if t.id != "unpredicted"}
    kept: list[tuple[object, object]] = []
    learn(plan, predictions, lambda samples, model: kept.append((dict(samples), model)))
    assert kept == [({"ANALYSIS": [(1, 2, 1_000, 900)]}, "m")]


def test_samples_are_remembered_per_endpoint_and_model_and_bounded(tmp_path: Path) -> None:
    store = CapabilityStore(tmp_path / "capabilities.json")
    runtime_like = build_capabilities(store, "http://h/v1")
    runtime_like.calibrate({"ANALYSIS": [(1, 2, 1_000, 900)] * (MAX_SAMPLES + 5)}, "m")
    again = build_capabilities(store, "http://h/v1")
    assert again.samples("ANALYSIS", "m") == [(1, 2, 1_000, 900)] * MAX_SAMPLES
    assert (
        again.samples("ANALYSIS", "other") == []
        and build_capabilities(store, "http://x/v1").samples("ANALYSIS", "m") == []
    )


@pytest.mark.parametrize(
    "written",
    [
        {"ANALYSIS": "lots"},
        {"ANALYSIS": [[1, 2, 3]]},
        {"ANALYSIS": [[1, 2, -3, 4]]},
        {"ANALYSIS": [[1, 2, True, 4]]},
        {"ANALYSIS": [[1, 2, 3.5, 4]]},
        {"ANALYSIS": [[1, 2, 10**12, 4]]},
        {"x" * 100: [[1, 1, 1, 1]]},
        [["ANALYSIS", [1, 1, 1, 1]]],
    ],
)
def test_a_calibration_written_badly_is_left_out(tmp_path: Path, written: object) -> None:
    path = tmp_path / "capabilities.json"
    entry = {"rejected": [], "plan_format": None, "updated": 4e9, "calibration": written}
    path.write_text(json.dumps({"version": 1, "entries": {"http://h/v1 m": entry}}))
    learned = CapabilityStore(path, clock=lambda: 4e9).load("http://h/v1", "m")
    assert learned is not None and learned.calibration == {}


def build_capabilities(store: CapabilityStore, base_url: str) -> Capabilities:
    return Capabilities(lambda: "m", base_url=base_url, store=store)


# ---- over the fake server: the second plan's estimate comes from the first plan's run ----


@pytest.fixture
async def runtime(fake: FakeLLM, workspace: Path) -> AsyncIterator[Runtime]:
    settings = Settings(
        workspace=workspace, api_key=SecretStr(TEST_KEY), base_url=fake.base_url, model="fake-model", review=False
    )
    runtime = build_runtime(settings, ListSink())
    yield runtime
    await runtime.aclose()


async def test_a_plan_run_calibrates_the_next_estimate_on_this_server(fake: FakeLLM, runtime: Runtime) -> None:
    """The model takes four requests for an analysis the rule prices at one: the first estimate is off and
    says it is not calibrated; the next plan's has the four requests, and its range holds what the task used."""
    (runtime.workspace / "notes.md").write_text("notes\n" * 200)
    tasks = [{"id": "t1", "description": "think about the notes", "type": "ANALYSIS", "dependencies": []}]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "s", "tasks": tasks})), repeat=True)
    fake.on(system_is(SUMMARIZER), Reply.text("done"), repeat=True)
    fake.on(all_of(task_is("t1"), tool_results(3)), Reply.text("thought"), repeat=True)  # three reads, the answer
    fake.on(task_is("t1"), Reply.tool_calls([("read_file", {"path": "notes.md"})]), repeat=True)
    runs: list[tuple[Estimate, Task]] = []
    for _ in range(2):
        sink = ListSink()
        outcome = await run_plan(runtime, sink, goal="think")
        assert outcome.exit_code() == 0 and outcome.plan is not None
        (finished,) = [event for event in sink.events if isinstance(event, PlanFinished)]
        assert finished.estimate is not None
        runs.append((finished.estimate, outcome.plan.task("t1")))
    (first, ran), (second, ran_again) = runs
    assert ran.requests == ran_again.requests == 4
    assert first.requests == 1 + 1 and first.uncalibrated == 1  # the task by the rule, the summary
    assert second.requests == 4 + 1 and second.uncalibrated == 0
    plan = Plan(goal="think", tasks=[Task.model_validate(tasks[0])])
    alone = runtime.estimator().task(plan, plan.tasks[0])  # the task's part of the next estimate
    assert alone.prompt_tokens_low <= ran_again.usage.prompt_tokens <= alone.prompt_tokens_high
    assert alone.prompt_tokens == pytest.approx(ran.usage.prompt_tokens, rel=0.01)


def tool_results(count: int) -> Callable[[Body], bool]:
    return lambda body: sum(m.get("role") == "tool" for m in body.get("messages", [])) >= count


def test_a_task_given_a_direct_actions_raw_output_is_its_own_kind() -> None:
    read = Task.model_validate(
        {"id": "r", "description": "read", "type": "FILE_READ", "action": {"tool": "read_file", "args": {"path": "a"}}}
    )
    given = Task(id="g", description="think", type=TaskType.ANALYSIS, dependencies=["r"])
    alone = Task(id="a", description="think", type=TaskType.ANALYSIS, dependencies=["g", "missing"])
    plan = Plan(goal="g", tasks=[read, given, alone])
    assert (kind_of(plan, given), kind_of(plan, alone)) == ("ANALYSIS/raw", "ANALYSIS")
