"""14. Token economy of a long chat (issue 16, item 6): the prompt tokens of every turn across a 50-turn REPL
session with compression on, and whether each request's prompt starts with the whole previous one, so
that a provider's prompt cache keeps hitting between compressions.

The session is bench/chat_session.py's (the real REPL in a pseudo-terminal; each turn a `read_file` of a
4 KB file and a 1.5 KB answer) with `context_tokens = 16000`, so compression comes every few turns, and
once more with a budget no conversation reaches (`1000000`): the same turns uncompressed. Tokens follow
the fake's rule (the JSON of messages and tools ÷ 4). A prompt is rendered as providers order it: the
tools, then each message; the cacheable part of a request is what it shares at its start with the
request before it, counted from 1,024 tokens on (OpenAI's minimum). Compression requests (no tools) are
counted in the totals: they are what compression costs.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.chat_session import asks_a_tool, compresses, repl_session, script
from bench.common import Result
from bench.prompt_cache import MIN_CACHED, common_prefix_length, prompt_tokens
from tests.fakellm import Body, FakeLLM

NAME = "longchat"
TITLE = "Token economy of a 50-turn chat with compression"
BUDGET = 16_000  # context_tokens of the compressed session
UNBOUNDED = 1_000_000
CACHED_PRICE = 0.1  # of an uncached token's: DeepSeek's and OpenAI's recent models' cache discount


def rendered(body: Body) -> str:
    """The prompt as a provider lays it out for its cache: tools first, then the messages in order."""
    return json.dumps(body.get("tools") or []) + "".join(json.dumps(m) for m in body.get("messages") or [])


@dataclass
class Session:
    """What the requests of one chat session cost, turn by turn."""

    turn_tokens: list[int] = field(default_factory=list)  # prompt tokens of each turn's chat requests
    compression_tokens: int = 0  # of the compression requests
    compressions: list[int] = field(default_factory=list)  # the turn during which each happened
    cached_tokens: int = 0  # of the chat requests, what a prompt cache could serve
    extends: int = 0  # chat requests that start with the whole previous chat request, between compressions
    steady: int = 0  # chat requests with no compression since the previous one
    shared_at_compression: list[float] = field(default_factory=list)  # % of the previous request kept
    largest: int = 0  # prompt tokens of the largest chat request

    @property
    def total(self) -> int:
        return sum(self.turn_tokens) + self.compression_tokens

    def priced(self, cached_price: float) -> float:
        """The prompt tokens at the uncached price, a cached one costing `cached_price` of it (compression
        requests are not cached: their system prompt differs from the chat's)."""
        return self.total - self.cached_tokens * (1 - cached_price)


def account(bodies: list[Body]) -> Session:
    """The requests of a session, in the order they were sent."""
    session = Session()
    previous: str | None = None
    compressed = False
    for body in bodies:
        if compresses(body):
            session.compression_tokens += prompt_tokens(body)
            session.compressions.append(len(session.turn_tokens))
            compressed = True
            continue
        if asks_a_tool(body):
            session.turn_tokens.append(0)
        tokens = prompt_tokens(body)
        session.turn_tokens[-1] += tokens
        session.largest = max(session.largest, tokens)
        text = rendered(body)
        if previous is not None:
            shared = common_prefix_length([previous, text])
            session.cached_tokens += shared // 4 if shared // 4 >= MIN_CACHED[0] else 0
            if compressed:
                session.shared_at_compression.append(100 * shared / len(previous))
            else:
                session.steady += 1
                session.extends += text.startswith(previous)
        previous, compressed = text, False
    return session


def chat(turns: int, context_tokens: int) -> Session:
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        script(fake, turns, answer_chars=1500)
        with repl_session(fake, Path(folder), note_chars=4000, config=f"context_tokens = {context_tokens}\n") as repl:
            for number in range(1, turns + 1):
                repl.turn(number)
        return account([r.body for r in fake.requests if r.body is not None])


def window_mean(values: list[int], start: int, end: int) -> float:
    """The mean of turns start..end (1-based, inclusive)."""
    return statistics.fmean(values[start - 1 : end])


def run(quick: bool = False) -> Result:
    turns, budget = (12, 6_000) if quick else (50, BUDGET)
    compressed, plain = chat(turns, budget), chat(turns, UNBOUNDED)
    result = Result(NAME, TITLE, details={"turns": turns, "context_tokens": budget})
    tenth = max(1, turns // 5)  # the windows compared: turns 21–30 and 41–50 of 50
    early, late = (2 * tenth + 1, 3 * tenth), (turns - tenth + 1, turns)
    result.add("compressions", len(compressed.compressions))
    result.add(f"prompt tokens per turn, turns {late[0]}–{late[1]}: mean", window_mean(compressed.turn_tokens, *late))
    for label, session in (("compressed", compressed), ("uncompressed", plain)):
        ratio = window_mean(session.turn_tokens, *late) / window_mean(session.turn_tokens, *early)
        result.add(
            f"{label}: turns {late[0]}–{late[1]} ÷ turns {early[0]}–{early[1]}",
            ratio,
            at_most=1.25 if label == "compressed" else None,
        )
    result.add("largest request: compressed / uncompressed", f"{compressed.largest:,} / {plain.largest:,} tokens")
    result.add("prompt tokens, whole session: compressed ÷ uncompressed", compressed.total / plain.total)
    cost = compressed.priced(CACHED_PRICE) / plain.priced(CACHED_PRICE)
    result.add("prompt cost, cached tokens at 0.1 ×: compressed ÷ uncompressed", cost)
    share = 100 * compressed.compression_tokens / compressed.total
    result.add("compression requests: share of the prompt tokens", share, "%")
    steady = 100 * compressed.extends / compressed.steady if compressed.steady else 100.0
    result.add("requests between compressions that extend the previous one whole", steady, "%", at_least=100.0)
    kept = compressed.shared_at_compression
    result.add("prefix kept across a compression: median", statistics.median(kept) if kept else 100.0, "%")
    for label, session in (("compressed", compressed), ("uncompressed", plain)):
        chat_tokens = sum(session.turn_tokens)
        result.add(f"{label}: cacheable share of chat prompt tokens", 100 * session.cached_tokens / chat_tokens, "%")
    result.details["per_turn"] = {"compressed": compressed.turn_tokens, "uncompressed": plain.turn_tokens}
    result.details["compressed_during_turn"] = compressed.compressions
    result.details["compression_prompt_tokens"] = compressed.compression_tokens
    result.details["prefix_kept_at_compression_pct"] = [round(v, 1) for v in kept]
    result.details["totals"] = {"compressed": compressed.total, "uncompressed": plain.total}
    return result
