"""Token figures as both front ends show them: exact counts as the server reported them (`1,234`),
estimates marked (`~1.2k`, paicli/llm/tokens.py)."""

from __future__ import annotations

from paicli.common.values import Retries, Usage

# `estimated` means any part: the planner's request reported, a cancelled one counted by paicli, say
ESTIMATED_NOTE = " (~ estimated where the server reported no usage)"


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


def retries_line(retries: Retries | None) -> str | None:
    """`retried 8 rate limited, 1 timeout (waits summing to 4.2 s)`; None when nothing was retried."""
    if retries is None or not retries.total:
        return None
    kinds = [
        (retries.rate_limited, "rate limited", "rate limited"),
        (retries.errors, "error", "errors"),
        (retries.streams, "broken stream", "broken streams"),
        (retries.timeouts, "timeout", "timeouts"),
    ]
    parts = [f"{count} {one if count == 1 else many}" for count, one, many in kinds if count]
    return f"retried {', '.join(parts)} (waits summing to {retries.waited_seconds:.1f} s)"


def format_duration(seconds: float) -> str:
    """`0.4s`, `12.3s`, `2m05s`, `1h02m`."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_tokens(count: int, estimated: bool = False) -> str:
    """`532 tok`, `12.3k tok`, `1.2M tok`; `~12.3k tok` when estimated."""
    return f"{'~' if estimated else ''}{compact_count(count)} tok"


def usage_line(turn: Usage, session: Usage | None = None) -> str:
    """`↑ 1,234 ↓ 56 tokens`; `↑ ~1.2k ↓ ~56 tokens (estimated)` when the server reported none."""
    line = f"{arrows(turn)} tokens"
    if turn.cached_tokens:
        line += f" ({token_count(turn.cached_tokens, turn.estimated)} cached)"
    if session is not None and session != turn:
        line += f" · session {arrows(session)}"
    if turn.estimated or (session is not None and session.estimated):
        line += ESTIMATED_NOTE
    return line
