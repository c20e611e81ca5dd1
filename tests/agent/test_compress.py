from __future__ import annotations

import json
from pathlib import Path

from paicli.agent.compress import STATE_HEADER, Compressor, estimate_tokens
from paicli.llm.client import LLMClient
from paicli.llm.types import Message
from tests.fakellm import FakeLLM, Reply, no_tools


def long_conversation(turns: int) -> list[Message]:
    messages: list[Message] = [
        {"role": "system", "content": "SYSTEM PROMPT"},
        {"role": "user", "content": "GOAL: rename the config loader"},
    ]
    for n in range(turns):
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": f"FILE {n} " + "x" * 2000},
        ]
    messages.append({"role": "user", "content": "LATEST QUESTION"})
    return messages


def tool_pairs_intact(messages: list[Message]) -> bool:
    offered: set[str] = set()
    for message in messages:
        for call in message.get("tool_calls") or []:
            offered.add(call["id"])
        if message["role"] == "tool" and message["tool_call_id"] not in offered:
            return False
    return True


async def test_compression_keeps_goal_and_latest_turns_and_fits_the_budget(fake: FakeLLM) -> None:
    fake.on(no_tools, Reply.text("## Goal\nrename the loader\n## Done so far\nread files 0-9"))
    llm = LLMClient(base_url=fake.base_url, api_key="k", model="m")
    budget = 4000
    messages = long_conversation(12)
    assert estimate_tokens(messages) > budget
    try:
        compacted = await Compressor(llm, budget_tokens=budget, prompt="COMPRESS", keep_messages=6)(messages)
    finally:
        await llm.aclose()
    assert compacted[0] == messages[0] and compacted[1] == messages[1]
    assert compacted[2]["content"].startswith(STATE_HEADER) and "read files 0-9" in compacted[2]["content"]
    assert compacted[-1] == {"role": "user", "content": "LATEST QUESTION"}
    assert compacted[3]["role"] != "tool" and tool_pairs_intact(compacted)
    assert estimate_tokens(compacted) < budget
    request = fake.requests[0].body
    assert request is not None and "tools" not in request
    sent = json.dumps(request["messages"])
    assert "FILE 0 " in sent and "COMPRESS" in sent


async def test_short_conversations_are_left_alone(fake: FakeLLM) -> None:
    llm = LLMClient(base_url=fake.base_url, api_key="k", model="m")
    messages = long_conversation(1)
    try:
        assert await Compressor(llm, budget_tokens=100_000, prompt="P")(messages) is messages
    finally:
        await llm.aclose()
    assert fake.requests == []


async def test_a_long_react_loop_compresses_before_it_overflows(fake: FakeLLM, tmp_path: Path) -> None:
    from paicli.agent.react import ReactLoop
    from paicli.common.events import ListSink
    from paicli.tools.base import ToolContext
    from paicli.tools.toolbox import ToolBox

    for n in range(8):
        (tmp_path / f"part{n}.txt").write_text(f"PART {n} " + "y" * 3000)
    fake.on(system_is_compressor, Reply.text("## Goal\nread every part\n## Done so far\nparts read"), repeat=True)
    replies = [Reply.tool_calls([("read_file", {"path": f"part{n}.txt"})]) for n in range(8)]
    fake.on("read every part", *replies, Reply.text("All parts read."))
    llm = LLMClient(base_url=fake.base_url, api_key="k", model="m")
    budget = 5000
    compressor = Compressor(llm, budget_tokens=budget, prompt="COMPRESS THE CONVERSATION", keep_messages=4)
    loop = ReactLoop(
        llm=llm,
        tools=ToolBox.default(),
        ctx=ToolContext(workspace=tmp_path),
        sink=ListSink(),
        before_request=compressor,
    )
    try:
        result = await loop.run([{"role": "system", "content": "SYS"}, {"role": "user", "content": "read every part"}])
    finally:
        await llm.aclose()
    assert result.content == "All parts read." and compressor.compactions >= 1
    agent_requests = [r for r in fake.requests if not system_is_compressor(r.body or {})]
    assert all(estimate_tokens(r.messages) < budget for r in agent_requests)
    assert all(r.messages[1]["content"] == "read every part" for r in agent_requests)  # the goal stays


def system_is_compressor(body: dict) -> bool:  # type: ignore[type-arg]
    messages = body.get("messages") or [{}]
    return messages[0].get("content") == "COMPRESS THE CONVERSATION"
