"""What a plan's task requests cost with one shared tool list or with a list per task type, and how much of
each a provider's prompt cache could serve.

Computed from the request bodies a real plan run sent to the fake server (benchmark 6): each task request
is given the tool list a variant would send, the rest of it unchanged (the scripted model calls only tools
its task may use, so its messages would not change either). Tokens follow the fake's rule, the length of
the JSON of messages and tools ÷ 4. The cacheable part of a request is its longest prefix in common with
any request sent before it (tools first, then the messages, the order providers render them in), counted
only from a minimum length on: OpenAI caches prefixes of 1,024 tokens or more, DeepSeek in units of 64.
A smaller list saves prompt tokens but shares less with the other types' requests; `break_even` is the
price of a cached token (as a share of an uncached one) above which the smaller lists cost less.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paicli.plan.contract import EFFECTS
from paicli.plan.model import TaskType
from paicli.tools.base import Effect
from paicli.tools.toolbox import ToolBox, builtin_tool
from tests.fakellm import Body, message_text

MIN_CACHED = (1024, 64)  # tokens: shorter common prefixes are not cached (OpenAI; DeepSeek's unit)

ToolList = list[dict[str, Any]]


@dataclass(frozen=True)
class Cost:
    prompt_tokens: int  # of the task requests
    cached_tokens: int  # of those, what a prompt cache could serve


def task_id(body: Body) -> str | None:
    """The plan task a request belongs to (its brief names it as `id: <task_id>`), None for other requests."""
    messages = body.get("messages") or []
    if len(messages) < 2 or not body.get("tools"):
        return None
    for line in message_text(messages[1]).splitlines():
        if line.startswith("id: "):
            return line.removeprefix("id: ")
    return None


def _effect(spec: dict[str, Any]) -> Effect:
    tool = builtin_tool(spec["function"]["name"])
    return tool.effect if tool is not None else Effect.EXECUTE


def shared(tools: ToolList, kind: TaskType) -> ToolList:
    return tools


def per_type(tools: ToolList, kind: TaskType) -> ToolList:
    """Only the tools a task of this type may call, in the shared list's order."""
    return [spec for spec in tools if _effect(spec) in EFFECTS[kind]]


def per_type_reads_first(tools: ToolList, kind: TaskType) -> ToolList:
    """Only the tools a task of this type may call, read-only ones first, so every type's list starts with
    the same read-only schemas."""
    chosen = per_type(tools, kind)
    return [s for s in chosen if _effect(s) is Effect.READ] + [s for s in chosen if _effect(s) is not Effect.READ]


VARIANTS: dict[str, Callable[[ToolList, TaskType], ToolList]] = {
    "one shared list": shared,
    "per type": per_type,
    "per type, read-only first": per_type_reads_first,
}


def cost(
    bodies: list[Body],
    types: dict[str, str],
    variant: Callable[[ToolList, TaskType], ToolList],
    min_cached: int = MIN_CACHED[0],
) -> Cost:
    """The task requests among `bodies` (in the order they were sent) with `variant`'s tool lists."""
    full = ToolBox.default().specs()  # what a session offers, before any variant chooses among it
    prompts: list[str] = []
    tokens = cached = 0
    for body in bodies:
        tid = task_id(body)
        if tid is None:
            continue
        tools = variant(full, TaskType(types[tid]))
        messages = list(body["messages"])
        tokens += prompt_tokens({"messages": messages, "tools": tools})
        text = json.dumps(tools) + json.dumps(messages)
        common = max((common_prefix_length([text, earlier]) for earlier in prompts), default=0) // 4
        cached += common if common >= min_cached else 0
        prompts.append(text)
    return Cost(tokens, cached)


def prompt_tokens(body: Body) -> int:
    """A request's prompt tokens as the fake server counts them."""
    return len(json.dumps(list(body.get("messages") or []) + list(body.get("tools") or []))) // 4


def break_even(shared: Cost, other: Cost) -> float:
    """The cache price (cached ÷ uncached token price) above which `other` costs less than `shared`; 0 when
    it always does, 1 when it never does."""
    saved, uncached_more = shared.prompt_tokens - other.prompt_tokens, shared.cached_tokens - other.cached_tokens
    if uncached_more <= 0:
        return 0.0 if saved >= 0 else 1.0
    return min(1.0, max(0.0, 1 - saved / uncached_more))


def common_prefix_length(texts: list[str]) -> int:
    """Characters at the start that every text has in common."""
    shortest, longest = min(texts), max(texts)  # the lexicographic extremes bound every other text
    low, high = 0, len(shortest)  # a binary search on slices: the comparisons run in C
    while low < high:
        middle = (low + high + 1) // 2
        if shortest[:middle] == longest[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
