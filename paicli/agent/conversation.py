"""Keeping a conversation consistent when a turn stops half way (cancelled, or a model error)."""

from __future__ import annotations

from paicli.llm.types import Message


def answered_part(messages: list[Message], start: int) -> list[Message]:
    """The conversation with an interrupted turn (from index `start`, its user message) cut back to what was
    answered: up to its last tool round whose every call has a result; nothing of it when no round did."""
    turn = messages[start:]
    keep = 0
    index = 1
    while index < len(turn):
        message = turn[index]
        if message.get("role") != "assistant":
            index += 1  # e.g. the "answer now" prompt of a spent step budget
            continue
        calls = message.get("tool_calls") or []
        if not calls:
            keep = index + 1
            index += 1
            continue
        end = index + 1
        while end < len(turn) and turn[end].get("role") == "tool":
            end += 1
        answered = {m.get("tool_call_id") for m in turn[index + 1 : end]}
        if not {call.get("id") for call in calls} <= answered:
            break
        keep = index = end
    return messages[:start] + turn[:keep]
