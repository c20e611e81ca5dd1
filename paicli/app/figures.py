"""Token figures as both front ends show them: exact counts as the server reported them (`1,234`),
estimates marked (`~1.2k`, paicli/llm/tokens.py)."""

from __future__ import annotations

from paicli.llm.types import Usage


def arrows(usage: Usage) -> str:
    """`↑ 1,234 ↓ 56`, or `↑ ~1.2k ↓ ~56` when any part was estimated."""
    sent = token_count(usage.prompt_tokens, usage.estimated)
    return f"↑ {sent} ↓ {token_count(usage.completion_tokens, usage.estimated)}"


def token_count(count: int, estimated: bool = False) -> str:
    """`1,234` as the server reported it; `~1.2k` when any part was estimated."""
    return f"~{compact_count(count)}" if estimated else f"{count:,}"


def compact_count(count: int) -> str:
    """`532`, `12.3k`, `1.2M`."""
    if count < 1000:
        return f"{count}"
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"
