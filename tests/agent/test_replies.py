"""Empty, filtered and reasoning replies in the ReAct loop: re-asked once, failed or digested, reported as
what they are; a model's thinking is streamed as its own events and never becomes the answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paicli.agent.react import DIGEST_HEADER, EMPTY_AFTER_TOOLS_PROMPT, EMPTY_ANSWER, EMPTY_REPLY_PROMPT, ReactLoop
from paicli.common.errors import AgentError
from paicli.common.events import ListSink
from paicli.llm.client import LLMClient
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox
from tests.fakellm import FakeLLM, Reply, has_tool_result, last_message_contains


@pytest.fixture
async def llm(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    client = LLMClient(base_url=fake.base_url, api_key="k", model="m", backoff_base=0.01)
    yield client
    await client.aclose()


def loop(llm: LLMClient, workspace: Path, sink: ListSink) -> ReactLoop:
    return ReactLoop(llm=llm, tools=ToolBox.default(), ctx=ToolContext(workspace=workspace, task_id="t1"), sink=sink)


def start(prompt: str) -> list[dict[str, object]]:
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt}]


async def test_an_empty_reply_is_asked_again_once_with_a_note(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    fake.on(last_message_contains(EMPTY_REPLY_PROMPT), Reply.text("Here it is."))
    fake.on("answer me", Reply.text(""))
    result = await loop(llm, workspace, ListSink()).run(start("answer me"))
    assert result.content == "Here it is." and len(fake.requests) == 2
    second = fake.requests[1].messages
    assert [m["role"] for m in second] == ["system", "user", "user"]  # the empty reply itself is not sent back


async def test_still_empty_after_the_re_ask_fails_saying_so(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    fake.on("answer me", Reply.text("", reasoning="I thought about it but said nothing"), repeat=True)
    with pytest.raises(AgentError, match=EMPTY_ANSWER):
        await loop(llm, workspace, ListSink()).run(start("answer me"))
    assert len(fake.requests) == 2  # asked again exactly once


async def test_empty_after_tool_calls_is_re_asked_then_digested_and_marked(
    fake: FakeLLM, llm: LLMClient, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the release is on Friday\n")
    fake.on(has_tool_result("read_file"), Reply.text(""), repeat=True)
    fake.on("read the notes", Reply.tool_calls([("read_file", {"path": "notes.txt"})]))
    result = await loop(llm, workspace, ListSink()).run(start("read the notes"))
    assert result.digested and result.content.startswith(DIGEST_HEADER)
    assert "the release is on Friday" in result.content
    assert fake.requests[2].messages[-1]["content"] == EMPTY_AFTER_TOOLS_PROMPT
    assert len(fake.requests) == 3
    assert result.messages[-1] == {"role": "assistant", "content": result.content}  # no empty reply kept


@pytest.mark.parametrize("reason", ["content_filter", "sensitive"])
async def test_a_filtered_reply_is_reported_as_filtered_and_not_re_asked(
    fake: FakeLLM, llm: LLMClient, workspace: Path, reason: str
) -> None:
    fake.on("answer me", Reply.text("", finish_reason=reason), repeat=True)
    with pytest.raises(AgentError, match=f"content filter.*finish_reason: {reason}"):
        await loop(llm, workspace, ListSink()).run(start("answer me"))
    assert len(fake.requests) == 1


async def test_a_reply_cut_off_while_reasoning_says_so(fake: FakeLLM, llm: LLMClient, workspace: Path) -> None:
    fake.on("answer me", Reply.text("", reasoning="long thought " * 20, finish_reason="length"))
    with pytest.raises(AgentError, match="token limit while the model was still reasoning"):
        await loop(llm, workspace, ListSink()).run(start("answer me"))


async def test_reasoning_streams_as_its_own_events_and_is_not_the_answer(
    fake: FakeLLM, llm: LLMClient, workspace: Path
) -> None:
    fake.on("answer me", Reply.text("Four.", reasoning="two plus two", chunk=3))
    sink = ListSink()
    result = await loop(llm, workspace, sink).run(start("answer me"))
    assert result.content == "Four."
    assert "".join(e.text for e in sink.of("reasoning_delta")) == "two plus two"  # type: ignore[attr-defined]
    assert "".join(e.text for e in sink.of("text_delta")) == "Four."  # type: ignore[attr-defined]
    assert {e.task_id for e in sink.of("reasoning_delta")} == {"t1"}  # type: ignore[attr-defined]
