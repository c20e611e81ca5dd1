"""Estimated token counts, for servers that report no usage (llama.cpp's Python server never sends a
usage chunk in a stream, although `stream_options.include_usage` asks for one).

The rule, chosen to need nothing offline and to err high (a budget trips early rather than late):
- ASCII text costs one token per 4 characters (rounded up), the usual figure for English and code with
  the BPE tokenizers of GPT, DeepSeek, Qwen, GLM and Kimi;
- every other character costs one token (CJK text runs at 0.6–1.5 characters a token on those
  tokenizers; accented Latin letters cost less, so this overcounts them);
- each message costs 4 tokens more (role and separators), a request 3 more (the reply's priming), and
  the tool schemas count as their compact JSON text.

No tokenizer is used: tiktoken downloads its vocabulary on first use, and the right vocabulary depends
on a model paicli cannot see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from paicli.common.values import Usage
from paicli.llm.images import IMAGE_TOKENS, is_image
from paicli.llm.types import Message, ToolSpec

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
REQUEST_OVERHEAD = 3


def estimate_text(text: str) -> int:
    """Tokens in `text` by the rule above."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def estimate_prompt(messages: Iterable[Message], tools: list[ToolSpec] | None = None) -> int:
    total = REQUEST_OVERHEAD
    for message in messages:
        total += MESSAGE_OVERHEAD + sum(estimate_text(part) for part in _message_texts(message))
        content = message.get("content")
        if isinstance(content, list):  # an image part: a fixed guess, never its base64 (paicli/llm/images.py)
            total += IMAGE_TOKENS * sum(1 for part in content if is_image(part))
    if tools:
        total += estimate_text(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    return total


def estimate_completion(content: str, reasoning: str = "", calls: Iterable[tuple[str, str]] = ()) -> int:
    """The reply: its text, its reasoning and each tool call's name and arguments."""
    calls_tokens = sum(estimate_text(name) + estimate_text(arguments) for name, arguments in calls)
    return estimate_text(content) + estimate_text(reasoning) + calls_tokens


def fill_in(reported: Usage | None, prompt: int, completion: int) -> Usage:
    """`reported` with the parts the server left out (none, or zero where text was sent or received)
    replaced by the estimates `prompt` and `completion`, marked `estimated`."""
    usage = reported or Usage()
    update: dict[str, Any] = {}
    if usage.prompt_tokens == 0 and prompt:
        update["prompt_tokens"] = prompt
    if usage.completion_tokens == 0 and completion:
        update["completion_tokens"] = completion
    if not update:
        return usage
    return usage.model_copy(update={**update, "estimated": True})


def _message_texts(message: Message) -> Iterable[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]
    for key in ("name", "reasoning_content", "reasoning"):
        if isinstance(message.get(key), str):
            yield message[key]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            yield str(function.get("name") or "")
            yield str(function.get("arguments") or "")
