"""Reasoning models: thinking is read from every spelling, kept out of the content, and sent back to each
model family by its documented rule (or as its server insists), tested both ways with scripted streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from paicli.llm.client import LLMClient
from paicli.llm.reasoning import SendBack, family_rule, outgoing
from paicli.llm.sse import ReplyAssembler
from paicli.llm.think import ThinkSplitter, split_reply
from paicli.llm.types import Message
from tests.fakellm import Body, FakeLLM, Reply, any_request

USER: Message = {"role": "user", "content": "what is in app.py?"}
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def client_for(fake: FakeLLM, model: str) -> LLMClient:
    return LLMClient(base_url=fake.base_url, api_key="sk-test-think-0001", model=model, backoff_base=0.01)


def sent_reasoning(body: Body | None) -> list[Any]:
    """`reasoning_content` of each assistant message of a request (None: not sent)."""
    return [m.get("reasoning_content") for m in (body or {}).get("messages", []) if m["role"] == "assistant"]


# ---- reading it ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_are_streamed_apart_and_never_in_the_content(fake: FakeLLM, field: str) -> None:
    fake.on(any_request, Reply.text("It prints 4.", reasoning="The file adds 2 and 2.", reasoning_field=field))
    llm = client_for(fake, "deepseek-chat")
    thoughts: list[str] = []
    texts: list[str] = []
    try:
        response = await llm.chat([USER], on_text=texts.append, on_reasoning=thoughts.append)
    finally:
        await llm.aclose()
    assert response.content == "It prints 4." == "".join(texts)
    assert response.reasoning == "The file adds 2 and 2." == "".join(thoughts)
    assert response.to_message()["reasoning_content"] == "The file adds 2 and 2."


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_inline_think_tags_are_split_out_in_any_chunking(size: int) -> None:
    text = "\n<think>\nadd 2 and 2; </thin is not the end\n</think>\n\nIt prints 4."
    assembler = ReplyAssembler()
    for start in range(0, len(text), size):
        piece = text[start : start + size]
        assembler.feed({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    response = assembler.result()
    assert response.content == "It prints 4."
    assert response.reasoning.strip() == "add 2 and 2; </thin is not the end"
    assert (response.reasoning, response.content) == split_reply(text)  # the same however the stream is cut


def test_text_that_does_not_start_with_a_think_tag_is_content_at_once() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<thinking about it>") == ("", "<thinking about it>")
    assert splitter.feed(" and <think>x</think>") == ("", " and <think>x</think>")  # only a leading tag counts
    assert ThinkSplitter().feed("Sure") == ("", "Sure")  # no delay: cannot be a tag


def test_a_lone_closing_tag_ends_the_reasoning_once_the_reply_is_complete() -> None:
    assembler = ReplyAssembler()  # Qwen3.5-style templates put <think> in the prompt
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "weighing it</think>\n\nThe answer."}}]})
    assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    response = assembler.result()
    assert (response.reasoning, response.content) == ("weighing it", "The answer.")


# ---- sending it back ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "rule"),
    [
        ("deepseek-reasoner", SendBack.NEVER),
        ("deepseek/deepseek-r1-distill-qwen-32b", SendBack.NEVER),
        ("deepseek-r1:14b", SendBack.NEVER),
        ("deepseek-chat", SendBack.TOOL_CALLS),
        ("deepseek-v4-pro", SendBack.TOOL_CALLS),
        ("kimi-k2.6", SendBack.TOOL_CALLS),
        ("glm-4.7", SendBack.TURN),
        ("Qwen/Qwen3-32B", SendBack.TURN),
        ("qwq:32b", SendBack.TURN),
        ("gpt-4o-mini", SendBack.NEVER),
    ],
)
def test_each_family_has_its_documented_rule(model: str, rule: SendBack) -> None:
    assert family_rule(model) is rule


CONVERSATION: list[Message] = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer", "reasoning_content": "thought 1"},
    {"role": "user", "content": "second question"},
    {"role": "assistant", "content": None, "reasoning_content": "thought 2", "tool_calls": [{"id": "c1"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "result"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c2"}]},
    {"role": "tool", "tool_call_id": "c2", "content": "result"},
]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (SendBack.NEVER, [None, None, None]),
        (SendBack.TOOL_CALLS, [None, "thought 2", ""]),  # a thinking conversation's tool-call message gets ""
        (SendBack.TURN, [None, "thought 2", ""]),
        (SendBack.ALWAYS, ["thought 1", "thought 2", ""]),
    ],
)
def test_outgoing_keeps_what_the_rule_says_and_never_changes_the_conversation(
    rule: SendBack, expected: list[Any]
) -> None:
    before = [dict(m) for m in CONVERSATION]
    assert sent_reasoning({"messages": outgoing(CONVERSATION, rule)}) == expected
    assert before == CONVERSATION


async def tool_turn(fake: FakeLLM, model: str) -> tuple[Body | None, Body | None]:
    """One turn with a tool call, then a new user question: the bodies of the 2nd and 3rd requests."""
    looking = Reply.tool_calls([("read_file", {"path": "app.py"})], reasoning="I must look")
    fake.on(lambda b: len(b["messages"]) == 1, looking)
    fake.on(lambda b: b["messages"][-1]["role"] == "tool", Reply.text("It prints 4.", reasoning="it adds"))
    fake.on(any_request, Reply.text("ok"))
    llm = client_for(fake, model)
    try:
        messages: list[Message] = [USER]
        first = await llm.chat(messages, tools=TOOLS)
        messages += [first.to_message(), {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "x"}]
        second = await llm.chat(messages, tools=TOOLS)
        messages += [second.to_message(), {"role": "user", "content": "and now?"}]
        await llm.chat(messages, tools=TOOLS)
    finally:
        await llm.aclose()
    return fake.requests[1].body, fake.requests[2].body


async def test_deepseek_reasoner_never_gets_its_reasoning_back(fake: FakeLLM) -> None:
    within, after = await tool_turn(fake, "deepseek-reasoner")
    assert sent_reasoning(within) == [None] and sent_reasoning(after) == [None, None]


async def test_deepseek_thinking_mode_gets_tool_call_reasoning_back_in_every_later_request(fake: FakeLLM) -> None:
    within, after = await tool_turn(fake, "deepseek-chat")
    assert sent_reasoning(within) == ["I must look"]
    assert sent_reasoning(after) == ["I must look", None]  # the answer's own reasoning is not needed


async def test_qwen_gets_reasoning_back_within_the_turn_only(fake: FakeLLM) -> None:
    within, after = await tool_turn(fake, "qwen3-coder-plus")
    assert sent_reasoning(within) == ["I must look"]
    assert sent_reasoning(after) == [None, None]


async def test_a_server_that_insists_gets_the_reasoning_and_it_is_remembered(fake: FakeLLM) -> None:
    def lacks_reasoning(body: Body) -> bool:
        return any(m["role"] == "assistant" and "reasoning_content" not in m for m in body["messages"])

    insist = Reply.error(400, "The reasoning_content in the thinking mode must be passed back to the API.")
    fake.on(lacks_reasoning, insist, repeat=True)
    fake.on(any_request, Reply.text("fine"), repeat=True)
    llm = client_for(fake, "some-new-thinker")  # unknown family: never, until the server says otherwise
    history: list[Message] = [USER, {"role": "assistant", "content": "a", "reasoning_content": "t"}, USER]
    try:
        assert (await llm.chat(history)).content == "fine"
        assert (await llm.chat(history)).content == "fine"
    finally:
        await llm.aclose()
    assert [sent_reasoning(r.body) for r in fake.requests] == [[None], ["t"], ["t"]]
    assert not llm.capabilities.accepts("reasoning.required")


async def test_a_server_that_refuses_it_stops_getting_it(fake: FakeLLM) -> None:
    refuse: Callable[[Body], bool] = lambda body: any("reasoning_content" in m for m in body["messages"])  # noqa: E731
    fake.on(refuse, Reply.error(400, "Extra inputs are not permitted: messages.1.reasoning_content"), repeat=True)
    fake.on(any_request, Reply.text("fine"), repeat=True)
    llm = client_for(fake, "glm-4.7")  # turn rule: would send it within the turn
    history: list[Message] = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "t",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "x"},
    ]
    try:
        assert (await llm.chat(history)).content == "fine"
    finally:
        await llm.aclose()
    assert [sent_reasoning(r.body) for r in fake.requests] == [["t"], [None]]
