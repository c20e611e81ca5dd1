"""What an interrupted turn leaves of the conversation: only what was answered."""

from __future__ import annotations

from typing import Any

from paicli.agent.conversation import answered_part

SYSTEM = {"role": "system", "content": "rules"}
EARLIER = [SYSTEM, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


def asks(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


USER = {"role": "user", "content": "do it"}


def test_a_turn_cancelled_before_any_answer_leaves_nothing() -> None:
    assert answered_part([*EARLIER, USER], len(EARLIER)) == EARLIER


def test_a_tool_round_without_all_its_results_is_dropped() -> None:
    messages = [*EARLIER, USER, asks("a", "b"), result("a")]
    assert answered_part(messages, len(EARLIER)) == EARLIER


def test_complete_tool_rounds_are_kept() -> None:
    messages = [*EARLIER, USER, asks("a"), result("a"), asks("b", "c"), result("b")]
    assert answered_part(messages, len(EARLIER)) == [*EARLIER, USER, asks("a"), result("a")]


def test_a_finished_turn_is_kept_whole() -> None:
    messages = [*EARLIER, USER, asks("a"), result("a"), {"role": "assistant", "content": "done"}]
    assert answered_part(messages, len(EARLIER)) == messages


def test_a_budget_prompt_without_its_answer_is_dropped() -> None:
    budget = {"role": "user", "content": "answer now"}
    messages = [*EARLIER, USER, asks("a"), result("a"), budget]
    assert answered_part(messages, len(EARLIER)) == [*EARLIER, USER, asks("a"), result("a")]
