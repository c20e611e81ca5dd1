"""The ReAct loop against the fake server over real HTTP, with the real tool box in a temp workspace."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paicli.agent.react import BUDGET_SPENT_PROMPT, ReactLoop
from paicli.common.errors import AgentError
from paicli.common.events import ApprovalWaited, ListSink
from paicli.llm.client import LLMClient
from paicli.plan.executor import ReactTaskRunner
from paicli.plan.model import Plan, Task, TaskAction, TaskType
from paicli.policy.approval import ApprovalPolicy
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext
from paicli.tools.toolbox import ToolBox
from tests.fakellm import FakeLLM, Reply, has_tool_result, no_tools


@pytest.fixture
async def llm(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    client = LLMClient(base_url=fake.base_url, api_key="k", model="m", backoff_base=0.01)
    yield client
    await client.aclose()


def loop(llm: LLMClient, workspace: Path, sink: ListSink, **options: object) -> ReactLoop:
    ctx = ToolContext(workspace=workspace, task_id="t1")
    return ReactLoop(llm=llm, tools=ToolBox.default(), ctx=ctx, sink=sink, **options)  # type: ignore[arg-type]


def start(prompt: str) -> list[dict[str, object]]:
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt}]


async def test_every_call_gets_a_result_in_order_even_when_a_sibling_fails(
    fake: FakeLLM, llm: LLMClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    fake.on(has_tool_result(), Reply.text("done"))
    fake.on(
        "look",
        Reply.tool_calls(
            [
                ("read_file", {"path": "a.txt"}),
                ("no_such_tool", {}),
                ("read_file", {"path": "../escape"}),
                ("list_dir", {}),
            ]
        ),
    )
    sink = ListSink()
    result = await loop(llm, workspace, sink).run(start("look"))
    assert result.content == "done"
    tool_messages = [m for m in fake.requests[-1].messages if m["role"] == "tool"]
    call_ids = [c["id"] for c in fake.requests[-1].messages[2]["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_messages] == call_ids
    assert "alpha" in tool_messages[0]["content"]
    assert "no_such_tool" in tool_messages[1]["content"] and "read_file" in tool_messages[1]["content"]
    assert tool_messages[2]["content"].startswith("Error")
    assert "a.txt" in tool_messages[3]["content"]
    oks = [e.ok for e in sink.of("tool_result")]  # type: ignore[attr-defined]
    assert oks == [True, False, False, True]
    assert {e.task_id for e in sink.of("tool_call")} == {"t1"}  # type: ignore[attr-defined]


async def test_spent_step_budget_asks_once_more_without_tools(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    fake.on(no_tools, Reply.text("Partial answer."))
    fake.on("loop forever", Reply.tool_calls([("list_dir", {})]), repeat=True)
    result = await loop(llm, workspace, ListSink(), max_steps=3).run(start("loop forever"))
    assert result.content == "Partial answer."
    assert len(fake.requests) == 4
    last = fake.requests[-1]
    assert last.body is not None and "tools" not in last.body
    assert last.messages[-1]["content"] == BUDGET_SPENT_PROMPT


async def test_spent_step_budget_fails_a_task(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    fake.on("loop forever", Reply.tool_calls([("list_dir", {})]), repeat=True)
    with pytest.raises(AgentError, match="step budget spent"):
        await loop(llm, workspace, ListSink(), max_steps=2, answer_on_budget=False).run(start("loop forever"))
    assert len(fake.requests) == 2


async def test_repeated_malformed_calls_end_the_loop_with_a_clear_error(
    fake: FakeLLM, llm: LLMClient, workspace: Path
) -> None:
    fake.on("break it", Reply.tool_calls([("write_file", '{"path": "x.txt", "content": ')]), repeat=True)
    with pytest.raises(AgentError, match="malformed tool calls 3 times"):
        await loop(llm, workspace, ListSink()).run(start("break it"))
    assert len(fake.requests) == 3
    assert not (workspace / "x.txt").exists()
    # the model was told what was wrong each time
    assert "JSON" in fake.requests[-1].messages[-1]["content"]


async def test_one_good_call_resets_the_malformed_count(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    bad = Reply.tool_calls([("list_dir", "{not json")])
    good = Reply.tool_calls([("list_dir", {})])
    fake.on("mixed", bad, bad, good, bad, bad, Reply.text("ok"))
    result = await loop(llm, workspace, ListSink()).run(start("mixed"))
    assert result.content == "ok"


async def test_the_wait_for_the_users_answer_is_reported_and_kept_out_of_the_tasks_time(workspace: Path) -> None:
    """Issue 32: a task's timer ran while it waited for an approval. The loop times each question (the plan
    executor keeps it on the task, the live view leaves it out)."""
    (workspace / "a.txt").write_text("x\n")

    async def slow_user(request: ApprovalRequest) -> ApprovalDecision:
        await asyncio.sleep(0.2)
        return ApprovalDecision(allowed=True, how="user")

    tools = ToolBox.default(gate=ApprovalPolicy(workspace, mode="ask"))
    sink = ListSink()
    ctx = ToolContext(workspace=workspace, task_id="t1", approve=slow_user)
    task = Task(
        id="t1",
        description="remove a.txt",
        type=TaskType.COMMAND,
        action=TaskAction(tool="execute_command", args={"command": "rm a.txt"}),
    )
    runner = ReactTaskRunner("sys", lambda task: ReactLoop(llm=None, tools=tools, ctx=ctx, sink=sink))  # type: ignore[arg-type]
    await runner(Plan(goal="tidy", tasks=[task]), task)
    assert not (workspace / "a.txt").exists()
    (waited,) = [event for event in sink.events if isinstance(event, ApprovalWaited)]
    assert waited.task_id == "t1" and waited.seconds >= 0.2 and task.waited == pytest.approx(waited.seconds, abs=0.01)
