from __future__ import annotations

import json

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
