"""Cutting streamed Markdown into complete blocks, so each is rendered once (used by ui/chat/render.py)."""

from __future__ import annotations

import re

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class MarkdownBlocks:
    """Cuts streamed Markdown into complete blocks. Each piece of text is looked at a bounded number of times."""

    def __init__(self) -> None:
        self._line_parts: list[str] = []  # the current line, not yet ended by a newline
        self._block: list[str] = []  # complete lines of the current block
        self._fence: str | None = None  # the fence characters while inside a code block
        self._fence_line = ""  # the whole opening line, language included

    def feed(self, text: str) -> list[str]:
        """Adds streamed text; returns the blocks it completed."""
        if "\n" not in text:
            if text:
                self._line_parts.append(text)
            return []
        pieces = text.split("\n")
        lines = ["".join(self._line_parts) + pieces[0], *pieces[1:-1]]
        self._line_parts = [pieces[-1]] if pieces[-1] else []
        blocks: list[str] = []
        for line in lines:
            self._take_line(line, blocks)
        return blocks

    def pending(self, max_chars: int | None = None, max_lines: int | None = None) -> str:
        """The unfinished block, or its tail of at most about `max_chars` characters and `max_lines` lines."""
        partial = "".join(self._line_parts)
        if max_chars is None and max_lines is None:
            return "\n".join([*self._block, partial]).strip("\n")
        max_chars = max_chars or len(partial) + sum(len(line) + 1 for line in self._block)
        max_lines = max_lines or len(self._block) + 1
        tail = [partial[-max_chars:]]
        size, taken = len(tail[0]), 0
        while taken < len(self._block) and size < max_chars and taken + 1 < max_lines:
            line = self._block[-1 - taken]
            tail.append(line)
            size, taken = size + len(line) + 1, taken + 1
        text = "\n".join(reversed(tail)).strip("\n")
        if self._fence is not None and taken < len(self._block):
            text = f"{self._fence_line}\n{text}"  # the fence line was cut off: keep the preview inside the code block
        return text

    def finish(self) -> str:
        """The unfinished block, and a fresh start."""
        text = self.pending()
        self._line_parts, self._block, self._fence = [], [], None
        return text

    def _take_line(self, line: str, blocks: list[str]) -> None:
        fence = FENCE.match(line)
        if self._fence is not None:
            self._block.append(line)
            if fence and self._closes(line.strip()):
                self._fence = None
                blocks.append("\n".join(self._block))
                self._block = []
        elif fence:
            self._fence, self._fence_line = fence.group(1), line.strip()
            self._block.append(line)
        elif not line.strip():
            if self._block:
                blocks.append("\n".join(self._block))
                self._block = []
        else:
            self._block.append(line)

    def _closes(self, stripped: str) -> bool:
        """A closing fence: only fence characters, the opening's kind, at least as many."""
        assert self._fence is not None
        return set(stripped) == {self._fence[0]} and len(stripped) >= len(self._fence)
