"""Reasoning written inline as `<think>…</think>` (reasoning models behind Ollama, vLLM without a
reasoning parser, llama.cpp): split out of the streamed content as it arrives.

Only a reply that *starts* with `<think>` (after white space) is split: its text up to `</think>` is
reasoning, the rest (leading blank lines dropped) is content. Tags may arrive cut across chunks. A reply
that does not start so is content from its first characters on, unchanged, with no delay after them.
Some chat templates (Qwen3.5) put `<think>` in the prompt, so the reply holds only `</think>`:
`split_closing_tag` separates such a reply once it is complete (its reasoning was streamed as text).
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    def __init__(self) -> None:
        self._state = "start"  # start → thinking → after → content, or start → content
        self._pending = ""  # text held back: a possible opening tag, or a possible piece of the closing one

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, content) of this piece of streamed content."""
        if self._state == "content":
            return "", text
        if self._state == "after":  # blank lines between `</think>` and the answer are dropped
            text = text.lstrip("\r\n")
            if text:
                self._state = "content"
            return "", text
        self._pending += text
        if self._state == "start":
            stripped = self._pending.lstrip()
            if len(stripped) < len(OPEN) and OPEN.startswith(stripped):
                return "", ""  # maybe an opening tag still arriving
            if not stripped.startswith(OPEN):
                self._state, rest, self._pending = "content", self._pending, ""
                return "", rest
            self._state, self._pending = "thinking", stripped[len(OPEN) :]
        return self._thinking()

    def finish(self) -> tuple[str, str]:
        """What was held back when the stream ended."""
        rest, self._pending = self._pending, ""
        if self._state == "thinking":
            return rest, ""
        return "", rest

    def _thinking(self) -> tuple[str, str]:
        end = self._pending.find(CLOSE)
        if end >= 0:
            reasoning, content = self._pending[:end], self._pending[end + len(CLOSE) :].lstrip("\r\n")
            self._state, self._pending = "content" if content else "after", ""
            return reasoning, content
        keep = _partial_tag_length(self._pending)
        reasoning = self._pending[: len(self._pending) - keep]
        self._pending = self._pending[len(reasoning) :]
        return reasoning, ""


def split_closing_tag(content: str) -> tuple[str, str]:
    """(reasoning, content) of a complete reply holding a `</think>` but no `<think>`; else ("", content)."""
    if CLOSE not in content or OPEN in content:
        return "", content
    reasoning, _, rest = content.partition(CLOSE)
    return reasoning.strip(), rest.lstrip()


def _partial_tag_length(text: str) -> int:
    """How many characters at the end of `text` could be the start of the closing tag."""
    for size in range(min(len(CLOSE) - 1, len(text)), 0, -1):
        if CLOSE.startswith(text[-size:]):
            return size
    return 0


def split_reply(text: str) -> tuple[str, str]:
    """(reasoning, content) of a whole reply, as a stream of it is split, however it is cut."""
    splitter = ThinkSplitter()
    reasoning, content = splitter.feed(text)
    rest_reasoning, rest_content = splitter.finish()
    late_reasoning, content = split_closing_tag(content + rest_content)
    return reasoning + rest_reasoning + late_reasoning, content
