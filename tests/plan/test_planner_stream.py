"""The planner streams its reply: `plan_task_streamed` for each task as its object completes, before
`plan_created`; a broken stream or a re-ask starts a new attempt; a server that ignores `stream: true`
works as before. Over real HTTP against the fake server."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from paicli.common.events import ListSink, PlanTaskStreamed, ReplyRestarted
from paicli.llm.client import LLMClient
from paicli.llm.meter import MeteredModel
from paicli.plan.model import Task
from paicli.plan.planner import Planner
from tests.fakellm import FakeLLM, Reply, last_message_contains, no_tools
from tests.plan.test_planner import CYCLIC, GOAL, SYSTEM, VALID


class Listener:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def task(self, task: Task) -> None:
        self.seen.append(task.id)

    def restart(self) -> None:
        self.seen.append("restart")


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    llm = LLMClient(base_url=fake.base_url, api_key="k", model=f"m-{uuid.uuid4().hex[:8]}", backoff_base=0.01)
    yield llm
    await llm.aclose()


def streamed(sink: ListSink) -> list[PlanTaskStreamed]:
    return [event for event in sink.events if isinstance(event, PlanTaskStreamed)]


async def test_each_task_is_streamed_before_the_plan_is_created(fake: FakeLLM, client: LLMClient) -> None:
    fake.on(no_tools, Reply.text(VALID, chunk=5))
    sink, listener = ListSink(), Listener()
    planner = Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink)
    planner.listener = listener
    plan = await planner.plan(GOAL)
    events = streamed(sink)
    assert [e.task.id for e in events] == ["task_1", "task_2", "task_3"] == listener.seen
    assert [e.task for e in events] == [task.view() for task in plan.tasks]
    assert {e.attempt for e in events} == {1} and {e.round for e in events} == {1}
    tokens = [e.tokens for e in events]
    assert 0 < tokens[0] < tokens[1] < tokens[2] <= -(-len(VALID) // 4)  # the first came mid-reply
    kinds = [e.event for e in sink.events]
    assert kinds.index("plan_created") > max(i for i, kind in enumerate(kinds) if kind == "plan_task_streamed")


async def test_a_server_that_ignores_stream_true_gives_every_task_at_the_end(fake: FakeLLM, client: LLMClient) -> None:
    completion = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": VALID}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20},
    }
    fake.on(no_tools, Reply.raw([json.dumps(completion).encode()], content_type="application/json"))
    sink = ListSink()
    plan = await Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink).plan(GOAL)
    assert plan.ids() == ["task_1", "task_2", "task_3"]
    assert [e.task.id for e in streamed(sink)] == plan.ids()


async def test_a_reask_starts_a_new_attempt_whose_tasks_replace_the_first(fake: FakeLLM, client: LLMClient) -> None:
    fake.on(last_message_contains("could not be used"), Reply.text(VALID))
    fake.on(no_tools, Reply.text(CYCLIC))
    sink, listener = ListSink(), Listener()
    planner = Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink)
    planner.listener = listener
    plan = await planner.plan(GOAL)
    assert plan.ids() == ["task_1", "task_2", "task_3"]
    events = streamed(sink)
    assert [(e.attempt, e.task.id) for e in events] == [
        (1, "task_1"),
        (1, "task_2"),
        (1, "task_4"),
        (2, "task_1"),
        (2, "task_2"),
        (2, "task_3"),
    ]
    assert listener.seen == ["task_1", "task_2", "task_4", "restart", "task_1", "task_2", "task_3"]
    restarted = [e for e in sink.events if isinstance(e, ReplyRestarted)]
    assert len(restarted) == 1 and restarted[0].task_id is None


async def test_a_stream_broken_inside_a_task_object_is_asked_again(fake: FakeLLM, client: LLMClient) -> None:
    cut = VALID.index("task_2") + 10  # inside the second task's object
    fake.on(no_tools, Reply.drop(after_chunks=cut // 7, content=VALID, chunk=7))
    fake.on(no_tools, Reply.text(VALID))
    sink, listener = ListSink(), Listener()
    planner = Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink)
    planner.listener = listener
    plan = await planner.plan(GOAL)
    assert plan.ids() == ["task_1", "task_2", "task_3"]
    assert listener.seen == ["task_1", "restart", "task_1", "task_2", "task_3"]  # task_2 was never whole
    assert [e.attempt for e in streamed(sink)] == [1, 2, 2, 2]


async def test_a_replan_streams_its_tasks_but_tells_no_listener(fake: FakeLLM, client: LLMClient) -> None:
    from tests.plan.test_planner import REPLANNER, finished_plan

    replanned = json.dumps(
        {"summary": "s", "tasks": [{"id": "task_4", "description": "x", "dependencies": ["task_1"]}]}
    )
    fake.on(no_tools, Reply.text(replanned))
    sink, listener = ListSink(), Listener()
    planner = Planner(MeteredModel(client), system_prompt=SYSTEM, sink=sink)
    planner.listener = listener
    await planner.replan(finished_plan(), reason="task_2 failed", replanner_prompt=REPLANNER)
    assert [(e.round, e.task.id, e.task.dependencies) for e in streamed(sink)] == [(2, "task_4", ["task_1"])]
    assert listener.seen == []  # early start is for the first round's plan only
