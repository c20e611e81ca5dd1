"""The planner against the fake model server over real HTTP: what it sends, what it accepts, how it
re-asks, falls back, amends and replans."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from paicli.common.errors import ModelHTTPError, PlanError
from paicli.common.events import ListSink, ModelUsage, Notice, PlanCreated
from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel
from paicli.llm.routed import RoutedModel
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.plan.planner import REASK_EXCERPT, Planner
from paicli.plan.scheduler import Scheduler
from tests.fakellm import FakeLLM, RecordedRequest, Reply, all_of, last_message_contains, no_tools

SYSTEM = "You are the planner. Reply with JSON."
REPLANNER = "You are the replanner. Reply with JSON."
GOAL = "Add a --verbose flag to src/app.py"
VALID = json.dumps(
    {
        "summary": "add the flag",
        "tasks": [
            {"id": "task_1", "description": "Read src/app.py", "type": "FILE_READ", "dependencies": []},
            {"id": "task_2", "description": "Add --verbose", "type": "FILE_WRITE", "dependencies": ["task_1"]},
            {"id": "task_3", "description": "Run pytest -q", "type": "VERIFICATION", "dependencies": ["task_2"]},
        ],
    }
)
CYCLIC = json.dumps(
    {
        "summary": "loops",
        "tasks": [
            {"id": "task_1", "description": "a", "type": "ANALYSIS", "dependencies": []},
            {"id": "task_2", "description": "b", "type": "ANALYSIS", "dependencies": ["task_1", "task_4"]},
            {"id": "task_4", "description": "c", "type": "ANALYSIS", "dependencies": ["task_2"]},
        ],
    }
)
REASK = "could not be used"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    # Structured-output support is remembered on the client (its capabilities), per model.
    llm = LLMClient(base_url=fake.base_url, api_key="k", model=f"m-{uuid.uuid4().hex[:8]}", backoff_base=0.01)
    yield llm
    await llm.aclose()


def planner_for(client: LLMClient, sink: ListSink, **options: Any) -> Planner:
    return Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink, **options)


def response_format(request: RecordedRequest) -> str | None:
    body = request.body or {}
    return (body.get("response_format") or {}).get("type")


def finished_plan() -> Plan:
    """Round 1 after execution: task_1 completed, task_2 failed, task_3 skipped."""
    return Plan(
        goal=GOAL,
        summary="add the flag",
        tasks=[
            Task(
                id="task_1",
                description="Read src/app.py",
                type=TaskType.FILE_READ,
                status=TaskStatus.COMPLETED,
                result="flags are parsed with argparse in main()",
            ),
            Task(
                id="task_2",
                description="Run the generator script",
                type=TaskType.COMMAND,
                dependencies=["task_1"],
                status=TaskStatus.FAILED,
                error="exit status 127: bash: gen.sh: command not found",
            ),
            Task(
                id="task_3",
                description="Run pytest -q",
                type=TaskType.VERIFICATION,
                dependencies=["task_2"],
                status=TaskStatus.SKIPPED,
                error="depends on task_2, which failed",
            ),
        ],
    )


# ---- plan -----------------------------------------------------------------------------------------


async def test_plan_is_one_tool_free_structured_request_and_emits_plan_created(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(no_tools, Reply.text(VALID))
    plan = await planner_for(client, sink).plan(GOAL)
    assert [(t.id, t.type, t.dependencies) for t in plan.tasks] == [
        ("task_1", TaskType.FILE_READ, []),
        ("task_2", TaskType.FILE_WRITE, ["task_1"]),
        ("task_3", TaskType.VERIFICATION, ["task_2"]),
    ]
    assert plan.goal == GOAL and plan.round == 1 and plan.summary == "add the flag"
    (request,) = fake.requests
    body = request.body or {}
    assert "tools" not in body
    assert response_format(request) == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["tasks"]["items"]["required"] == ["id", "description", "type", "dependencies"]
    assert request.messages[0] == {"role": "system", "content": SYSTEM}
    assert GOAL in request.messages[1]["content"]
    (created,) = sink.of("plan_created")
    assert isinstance(created, PlanCreated) and created.round == 1
    assert created.plan.model_dump() == plan.view().model_dump()
    assert [e.usage.total > 0 for e in sink.events if isinstance(e, ModelUsage)] == [True]


async def test_round_number_is_passed_through(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on(no_tools, Reply.text(VALID))
    plan = await planner_for(client, sink).plan(GOAL, round=3)
    assert plan.round == 3 and {t.round for t in plan.tasks} == {3}


# ---- re-ask ---------------------------------------------------------------------------------------


async def test_a_cyclic_reply_is_sent_back_with_the_cycle_path_and_the_second_reply_is_used(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(last_message_contains(REASK), Reply.text(VALID))
    fake.on(no_tools, Reply.text(CYCLIC))
    plan = await planner_for(client, sink).plan(GOAL)
    assert plan.ids() == ["task_1", "task_2", "task_3"]
    first, second = fake.requests
    assert second.messages[:2] == first.messages
    assert second.messages[2] == {"role": "assistant", "content": CYCLIC}
    assert second.messages[3]["role"] == "user"
    assert "the dependencies form a cycle: task_2 → task_4 → task_2" in second.messages[3]["content"]
    assert len(sink.of("plan_created")) == 1
    assert any("asking the model again (1 of 2)" in e.message for e in sink.events if isinstance(e, Notice))


async def test_after_two_failed_reasks_the_planner_gives_up_with_the_last_error(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(no_tools, Reply.text(CYCLIC), repeat=True)
    with pytest.raises(PlanError) as caught:
        await planner_for(client, sink).plan(GOAL)
    assert "no valid plan in 3 replies" in str(caught.value)
    assert "task_2 → task_4 → task_2" in str(caught.value)
    assert len(fake.requests) == 3
    assert sink.of("plan_created") == []


async def test_max_reasks_zero_means_a_single_request(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on(no_tools, Reply.text("I cannot plan this."), repeat=True)
    with pytest.raises(PlanError, match="no valid plan in 1 reply: the reply contains no JSON"):
        await planner_for(client, sink, max_reasks=0).plan(GOAL)
    assert len(fake.requests) == 1


async def test_a_reply_cut_off_at_the_token_limit_is_never_accepted(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    cut = VALID[: VALID.index("task_3") - 20]  # two complete tasks: json_repair would accept a shorter plan
    fake.on(last_message_contains(REASK), Reply.text(VALID))
    fake.on(no_tools, Reply.text(cut, finish_reason="length"))
    plan = await planner_for(client, sink).plan(GOAL)
    assert len(plan.tasks) == 3
    assert "cut off at the token limit" in fake.requests[1].messages[-1]["content"]


async def test_an_empty_reply_is_reasked_without_an_empty_assistant_message(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(last_message_contains(REASK), Reply.text(VALID))
    fake.on(no_tools, Reply.text(""))
    await planner_for(client, sink).plan(GOAL)
    second = fake.requests[1]
    assert [m["role"] for m in second.messages] == ["system", "user", "user"]
    assert "the reply was empty" in second.messages[-1]["content"]


async def test_a_reask_quotes_only_an_excerpt_of_a_huge_rejected_reply(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    junk = "HEAD " + "blah " * 120_000 + " TAIL"  # 600 KB of prose without JSON
    fake.on(last_message_contains(REASK), Reply.text(VALID))
    fake.on(no_tools, Reply.text(junk, chunk=50_000))
    await planner_for(client, sink).plan(GOAL)
    quoted = fake.requests[1].messages[2]
    assert quoted["role"] == "assistant" and len(quoted["content"]) <= REASK_EXCERPT + 100
    assert quoted["content"].startswith("HEAD") and quoted["content"].endswith("TAIL")
    assert "characters omitted" in quoted["content"]
    assert len(json.dumps(fake.requests[1].body)) < 40_000


async def test_the_task_limit_is_enforced(fake: FakeLLM, client: LLMClient, sink: ListSink) -> None:
    fake.on(no_tools, Reply.text(VALID), repeat=True)
    with pytest.raises(PlanError, match="more than the limit of 2"):
        await planner_for(client, sink, max_tasks=2, max_reasks=1).plan(GOAL)


# ---- structured-output fallback -------------------------------------------------------------------


def asks_for(kind: str) -> Any:
    return lambda body: (body.get("response_format") or {}).get("type") == kind


async def test_json_schema_rejected_with_500_falls_back_to_json_object_and_is_remembered(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(asks_for("json_schema"), Reply.error(500, "response_format json_schema is not supported"), repeat=True)
    fake.on(no_tools, Reply.text(VALID), repeat=True)
    planner = planner_for(client, sink)
    await planner.plan(GOAL)
    kinds = [response_format(r) for r in fake.requests]
    assert kinds == ["json_schema", "json_object"]  # the 500 names the field: recognised, never retried
    assert planner.mode == "json_object"
    assert any("did not accept response_format json_schema" in e.message for e in sink.events if isinstance(e, Notice))

    before = len(fake.requests)
    await planner.plan("another goal")
    assert [response_format(r) for r in fake.requests[before:]] == ["json_object"]

    before = len(fake.requests)
    await planner_for(client, ListSink()).plan("a third goal")  # a new planner for the same server and model
    assert [response_format(r) for r in fake.requests[before:]] == ["json_object"]


async def test_structured_output_is_remembered_for_the_planners_own_model(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    routed = "planner-model"
    fake.on(all_of(asks_for("json_schema"), lambda body: body["model"] == routed), Reply.error(400, "no json_schema"))
    fake.on(no_tools, Reply.text(VALID), repeat=True)
    await Planner(RoutedModel(MeteredModel(client), routed), system_prompt=SYSTEM, sink=sink).plan(GOAL)
    assert [(r.body or {})["model"] for r in fake.requests] == [routed, routed]
    before = len(fake.requests)
    await Planner(RoutedModel(MeteredModel(client), routed), system_prompt=SYSTEM, sink=sink).plan(GOAL)
    assert [response_format(r) for r in fake.requests[before:]] == ["json_object"]  # remembered for `routed`
    before = len(fake.requests)
    await planner_for(client, sink).plan(GOAL)  # the session model was never refused anything
    assert [response_format(r) for r in fake.requests[before:]] == ["json_schema"]


async def test_a_server_rejecting_every_response_format_gets_a_plain_prompt(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(lambda body: "response_format" in body, Reply.error(400, "unknown field response_format"), repeat=True)
    fake.on(no_tools, Reply.text(f"Here is the plan:\n```json\n{VALID}\n```"), repeat=True)
    planner = planner_for(client, sink)
    plan = await planner.plan(GOAL)
    assert len(plan.tasks) == 3
    assert [response_format(r) for r in fake.requests] == ["json_schema", "json_object", None]
    assert planner.mode == "plain"


async def test_other_http_errors_are_not_taken_for_missing_support(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    fake.on(no_tools, Reply.error(401, "invalid api key"), repeat=True)
    planner = planner_for(client, sink)
    with pytest.raises(ModelHTTPError) as caught:
        await planner.plan(GOAL)
    assert caught.value.status == 401 and "invalid api key" in str(caught.value)
    assert planner.mode == "json_schema"
    assert len(fake.requests) == 1


# ---- amend ----------------------------------------------------------------------------------------


async def test_amend_sends_the_old_plan_and_the_supplement_and_returns_the_revised_plan(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    revised = json.loads(VALID)
    revised["tasks"].insert(
        2,
        {
            "id": "task_4",
            "description": "Document --verbose in README.md",
            "type": "FILE_WRITE",
            "dependencies": ["task_2"],
        },
    )
    revised["tasks"][3]["dependencies"] = ["task_2", "task_4"]
    fake.on("Change requested by the user", Reply.text(json.dumps(revised)))
    fake.on(no_tools, Reply.text(VALID))
    planner = planner_for(client, sink)
    plan = await planner.plan(GOAL)
    amended = await planner.amend(plan, "also document the flag in README.md")
    request = fake.requests[1]
    text = request.messages[-1]["content"]
    assert "also document the flag in README.md" in text
    assert json.dumps(plan.spec(), indent=2) in text
    assert "Change only what the request affects" in text
    assert request.messages[0]["content"] == SYSTEM
    assert amended.ids() == ["task_1", "task_2", "task_4", "task_3"]
    assert amended.task("task_3").dependencies == ["task_2", "task_4"]
    assert amended.goal == plan.goal and amended.round == plan.round
    assert [e.plan.tasks[2].id for e in sink.of("plan_created") if isinstance(e, PlanCreated)] == ["task_3", "task_4"]


async def test_amend_keeps_finished_tasks_and_renames_a_new_task_that_reuses_their_ids(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    plan = finished_plan()
    plan.tasks.append(Task(id="task_4", description="Write gen.sh", type=TaskType.FILE_WRITE, round=2))
    plan.round = 2
    reply = {
        "summary": "s",
        "tasks": [
            {"id": "task_4", "description": "Write gen.sh", "type": "FILE_WRITE", "dependencies": ["task_1"]},
            {"id": "task_2", "description": "Run gen.sh", "type": "COMMAND", "dependencies": ["task_4"]},
        ],
    }
    fake.on(no_tools, Reply.text(json.dumps(reply)))
    amended = await planner_for(client, sink).amend(plan, "run the script after writing it")
    text = fake.requests[0].messages[-1]["content"]
    assert "task_2 [COMMAND] FAILED" in text and '"Write gen.sh"' in text
    assert amended.ids() == ["task_1", "task_2", "task_3", "task_4", "task_5"]
    assert [t.status for t in amended.tasks[:3]] == [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED]
    assert amended.task("task_2").description == "Run the generator script"  # the finished one, untouched
    assert amended.task("task_5").description == "Run gen.sh"
    assert amended.task("task_5").dependencies == ["task_4"]


# ---- replan ---------------------------------------------------------------------------------------


async def test_replan_sends_results_errors_skipped_work_and_feedback(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    reply = {
        "summary": "write the script first",
        "tasks": [
            {"id": "task_4", "description": "Write gen.sh", "type": "FILE_WRITE", "dependencies": ["task_1"]},
            {"id": "task_5", "description": "Run pytest -q", "type": "VERIFICATION", "dependencies": ["task_4"]},
        ],
    }
    fake.on(no_tools, Reply.text(json.dumps(reply)))
    plan = finished_plan()
    new_plan = await planner_for(client, sink).replan(
        plan, reason="task_2 failed", feedback="the script does not exist yet", replanner_prompt=REPLANNER
    )
    (request,) = fake.requests
    assert request.messages[0] == {"role": "system", "content": REPLANNER}
    text = request.messages[1]["content"]
    for expected in (
        GOAL,
        "task_2 failed",
        "flags are parsed with argparse in main()",
        "exit status 127: bash: gen.sh: command not found",
        "task_3",
        "depends on task_2, which failed",
        "the script does not exist yet",
        "task_4",
    ):
        assert expected in text
    assert new_plan.round == 2 and new_plan.summary == "write the script first"
    assert new_plan.ids() == ["task_1", "task_2", "task_3", "task_4", "task_5"]
    assert [t.id for t in new_plan.current()] == ["task_4", "task_5"]
    assert new_plan.task("task_1").result == "flags are parsed with argparse in main()"
    assert plan.task("task_2").status is TaskStatus.FAILED  # the input plan is not changed
    (created,) = sink.of("plan_created")
    assert isinstance(created, PlanCreated) and created.round == 2
    assert [t.status for t in created.plan.tasks] == ["COMPLETED", "FAILED", "SKIPPED", "PENDING", "PENDING"]


async def test_replan_renames_new_tasks_that_reuse_earlier_ids_and_dependencies_follow(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    reply = {
        "summary": "retry",
        "tasks": [
            {"id": "task_2", "description": "Write gen.sh", "type": "FILE_WRITE", "dependencies": ["task_1"]},
            {"id": "task_3", "description": "Run gen.sh", "type": "COMMAND", "dependencies": ["task_2"]},
            {"id": "task_4", "description": "Run pytest", "type": "VERIFICATION", "dependencies": ["task_3", "task_1"]},
        ],
    }
    fake.on(no_tools, Reply.text(json.dumps(reply)))
    new_plan = await planner_for(client, sink).replan(
        finished_plan(), reason="task_2 failed", replanner_prompt=REPLANNER
    )
    assert len(set(new_plan.ids())) == len(new_plan.tasks) == 6
    fresh = {t.description: (t.id, t.dependencies) for t in new_plan.current()}
    assert fresh == {
        "Write gen.sh": ("task_5", ["task_1"]),  # task_1 is the completed task: not renamed
        "Run gen.sh": ("task_6", ["task_5"]),
        "Run pytest": ("task_4", ["task_6", "task_1"]),
    }
    assert new_plan.task("task_2").status is TaskStatus.FAILED


async def test_replan_rejects_a_dependency_on_a_failed_task_and_says_why(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    good = {"tasks": [{"id": "task_4", "description": "Fix it", "type": "FILE_WRITE", "dependencies": ["task_1"]}]}
    bad = {"tasks": [{"id": "task_4", "description": "Fix it", "type": "FILE_WRITE", "dependencies": ["task_2"]}]}
    fake.on(last_message_contains(REASK), Reply.text(json.dumps(good)))
    fake.on(no_tools, Reply.text(json.dumps(bad)))
    new_plan = await planner_for(client, sink).replan(finished_plan(), reason="r", replanner_prompt=REPLANNER)
    assert new_plan.task("task_4").dependencies == ["task_1"]
    assert (
        'task "task_4" depends on "task_2", which is neither a task of this plan nor a completed task'
        in fake.requests[1].messages[-1]["content"]
    )


async def test_replan_clips_long_results_keeping_head_and_tail(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    plan = finished_plan()
    plan.tasks[0].result = "HEAD " + "x" * 50_000 + " TAIL"
    fake.on(no_tools, Reply.text(json.dumps({"tasks": [{"id": "task_9", "description": "d"}]})))
    await planner_for(client, sink).replan(plan, reason="r", replanner_prompt=REPLANNER)
    text = fake.requests[0].messages[1]["content"]
    assert "HEAD " in text and " TAIL" in text and "characters omitted" in text
    assert len(text) < 6_000


async def test_a_replanned_plan_runs_only_its_new_tasks_with_earlier_results_available(
    fake: FakeLLM, client: LLMClient, sink: ListSink
) -> None:
    reply = {
        "tasks": [{"id": "task_2", "description": "Write gen.sh", "type": "FILE_WRITE", "dependencies": ["task_1"]}]
    }
    fake.on(no_tools, Reply.text(json.dumps(reply)))
    new_plan = await planner_for(client, sink).replan(finished_plan(), reason="r", replanner_prompt=REPLANNER)
    seen: dict[str, list[str | None]] = {}

    async def runner(plan: Plan, task: Task) -> str:
        seen[task.id] = [plan.task(dep).result for dep in task.dependencies]
        return f"done {task.id}"

    await Scheduler(runner, ListSink()).run(new_plan)
    assert seen == {"task_4": ["flags are parsed with argparse in main()"]}
    assert new_plan.task("task_4").status is TaskStatus.COMPLETED
