"""Images in a conversation: a user message's content parts in the OpenAI wire format (issue 35).

    {"role": "user", "content": [{"type": "text", "text": "what is wrong here?"},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}]}

Whether a model takes them is the capability `vision` (paicli/llm/capabilities.py): learned from the first
refusal (paicli/llm/rejections.py) or by `paicli doctor`, and remembered. A model known not to take them
gets each image replaced by a line of text saying so; the conversation itself keeps them.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from paicli.llm.types import Message

CAPABILITY = "vision"
IMAGE_TOKENS = 1_000  # what one image counts for in estimates (providers charge 85 to ~1,600 tokens a tile)
NOT_SENT = "[an image was here; it was not sent: the model does not take images]"


def image_part(data: bytes, mime: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def images_in(messages: Iterable[Message]) -> int:
    """How many image parts the messages hold."""
    return sum(1 for m in messages if isinstance(m.get("content"), list) for part in m["content"] if is_image(part))


def without_images(messages: list[Message]) -> list[Message]:
    """The messages as sent to a model that takes no images: each image part a line of text instead."""
    if not images_in(messages):
        return messages
    sent: list[Message] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(is_image(part) for part in content):
            parts = [text_part(NOT_SENT) if is_image(part) else part for part in content]
            sent.append({**message, "content": parts})
        else:
            sent.append(message)
    return sent


def image_data_left_out(messages: list[Message]) -> list[Message]:
    """The messages with each image's data replaced by a short stand-in: what sizes and estimates look at
    (a 1 MB image is some 1,000 tokens, not 350,000)."""
    if not images_in(messages):
        return messages
    return [
        {**m, "content": [text_part("[image]") if is_image(part) else part for part in m["content"]]}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]
