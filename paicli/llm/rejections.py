"""Reading an error reply for the request field it rejects, so the client adapts on the first reply.

Servers say "not supported" in many ways: OpenAI answers 400 naming `max_tokens` or `temperature`, vLLM
and llama-cpp-python answer 400 or 422 with a pydantic validation error, llama-cpp-python answers
`response_format: json_schema` with HTTP **500** whose body names the field, Ollama answers 400 "does
not support tools". A field counts as rejected when the request carried it and the error body names it;
a 5xx must also say why in the words of a refusal (a crash that merely echoes the request is not one).
Statuses that are about something else (401, 403, 404, 408, 429) are never read this way.

The names returned are the capability names of `paicli.llm.capabilities`: a request field
(`stream_options`, `temperature`, `max_tokens`, `parallel_tool_calls`, `tools`), a field's value
(`response_format.json_schema`, `response_format.json_object`), what the server wants of reasoning
sent back (`reasoning.refused`: it rejects it; `reasoning.required`: it insists on it), or `vision`: it
takes no image parts (paicli/llm/images.py).
"""

from __future__ import annotations

import re
from typing import Any

from paicli.llm.images import images_in

NOT_ABOUT_FIELDS = frozenset({401, 403, 404, 408, 429})
REFUSAL_WORDS = (  # how a 5xx says "not supported" (a 4xx naming the field is enough)
    "not support",
    "unsupported",
    "not allowed",
    "not permitted",
    "extra inputs",
    "extra_forbidden",
    "unrecognized",
    "input should be",
    "literal_error",
    "validation error",
)
REQUIRED_WORDS = ("must be passed", "must be included", "required", "missing", "must pass", "need to pass")
CLIENT_FIELDS = ("stream_options", "temperature", "parallel_tool_calls")  # the client drops these itself
IMAGE_WORDS = ("image", "vision", "multimodal", "multi-modal")  # how a server refuses image parts


def rejected_field(status: int, message: str, body: dict[str, Any]) -> str | None:
    """The capability the error reply `message` (its body's words) refuses, or None."""
    if status < 400 or status in NOT_ABOUT_FIELDS:
        return None
    text = message.lower()
    if status >= 500 and not any(word in text for word in REFUSAL_WORDS):
        return None
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        kind = str(response_format.get("type") or "")
        if kind in ("json_schema", "json_object") and (_names(text, kind) or _names(text, "response_format")):
            return f"response_format.{kind}"
    if _names(text, "reasoning_content"):
        if any(word in text for word in REQUIRED_WORDS):
            return "reasoning.required"
        if _sends_reasoning(body):
            return "reasoning.refused"
    for field in CLIENT_FIELDS:
        if field in body and _names(text, field):
            return field
    if "max_tokens" in body and "max_completion_tokens" in text:
        return "max_tokens"
    if body.get("tools") and (_names(text, "tools") or _names(text, "tool_choice") or "tool choice" in text):
        return "tools"
    if images_in(body.get("messages") or []) and any(word in text for word in IMAGE_WORDS):
        return "vision"
    return None


def _names(text: str, field: str) -> bool:
    """`field` appears as a word of its own (`tools`, not `tools_used`)."""
    return re.search(rf"(?<![a-z0-9_]){re.escape(field)}(?![a-z0-9_])", text) is not None


def _sends_reasoning(body: dict[str, Any]) -> bool:
    return any(isinstance(m, dict) and m.get("reasoning_content") for m in body.get("messages") or [])
