"""Context compression: when a conversation nears its token budget, the older turns become one structured
state message written by a tool-free request; the system prompt, the first user message (the goal) and
the latest turns stay verbatim. A tool call and its results are never split.

A `Compressor` is a ReactLoop `before_request` hook; `compact` also serves `/compact`.
"""

from __future__ import annotations

import json

from paicli.llm.images import IMAGE_TOKENS, image_data_left_out, images_in
from paicli.llm.reasoning import without_reasoning
from paicli.llm.types import ChatModel, Message

STATE_HEADER = "[Earlier conversation, compressed]\n\n"
TRIGGER = 0.8  # compress once the estimate passes this share of the budget


def estimate_tokens(messages: list[Message]) -> int:
    """A cheap, deterministic estimate (about four characters a token) that needs no tokenizer; an image
    counts IMAGE_TOKENS, whatever the size of its data."""
    text = json.dumps(image_data_left_out(messages), ensure_ascii=False)
    return len(text) // 4 + IMAGE_TOKENS * images_in(messages)


def turn_starts(messages: list[Message], first: int) -> list[int]:
    """Indexes where a kept tail may start: a user message, or an assistant message (its tool results
    follow it). Never a tool message, so no tool result is separated from its call."""
    return [i for i in range(first, len(messages)) if messages[i].get("role") in ("user", "assistant")]


class Compressor:
    def __init__(self, llm: ChatModel, *, budget_tokens: int, prompt: str, keep_messages: int = 6) -> None:
        self.llm = llm
        self.budget = budget_tokens
        self.prompt = prompt
        self.keep_messages = keep_messages
        self.compactions = 0

    async def __call__(self, messages: list[Message]) -> list[Message]:
        if estimate_tokens(messages) < self.budget * TRIGGER:
            return messages
        return await self.compact(messages)

    async def compact(self, messages: list[Message]) -> list[Message]:
        head = 0
        while head < len(messages) and messages[head].get("role") == "system":
            head += 1
        if head < len(messages) and messages[head].get("role") == "user":
            head += 1  # the goal stays verbatim
        starts = turn_starts(messages, head + 1)
        if not starts:
            return messages
        # The earliest turn boundary whose tail is short and leaves half the budget for the state.
        room = self.budget // 2
        cut = next(
            (
                i
                for i in starts
                if len(messages) - i <= self.keep_messages and estimate_tokens(messages[:head] + messages[i:]) < room
            ),
            starts[-1],
        )
        older, tail = messages[head:cut], messages[cut:]
        if not older:
            return messages
        state = await self._summarize(messages[:head], older)
        self.compactions += 1
        return [*messages[:head], {"role": "user", "content": STATE_HEADER + state}, *tail]

    async def _summarize(self, head: list[Message], older: list[Message]) -> str:
        kept = [without_reasoning(message) for message in [*head[1:], *older]]  # thinking is no part of the state
        kept = image_data_left_out(kept)  # an image is "[image]" in the transcript, never its base64
        transcript = json.dumps(kept, ensure_ascii=False, indent=1)
        request: list[Message] = [
            {"role": "system", "content": self.prompt},
            {"role": "user", "content": f"The conversation so far, as JSON messages:\n\n{transcript}"},
        ]
        response = await self.llm.chat(request)
        return response.content.strip() or "(the earlier conversation could not be summarised)"
