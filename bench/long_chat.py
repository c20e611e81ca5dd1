"""14. Token economy of a long chat: prompt tokens per turn over a 50-turn scripted session.

The REPL's turn (`paicli.app.driver.run_turn`: a ReAct loop with the context compressor before each
request) on one growing conversation, against the fake server in this process: each turn a user message
of about 300 characters and a reply of about 1,500 (Markdown with a code fence). Two sessions: with the
compressor at a small budget (`context_tokens` 8,000, so that 50 turns cross it several times) and with
the default budget (64,000: these 50 turns never reach it, the curve without compression). Per turn: the
prompt tokens of its request's messages (paicli's own estimate, about four characters a token, what the
compressor weighs against its budget; the tool schemas add the same amount to every request, in the
JSON). The curve must flatten (compression works): the largest prompt stays under the budget.
And between compressions the prompt must only grow at its end (prompt caches keep hitting): a turn
"keeps the prefix" when its request's messages begin with all of the previous turn's request's.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Result
from bench.harness import runtime_for
from paicli.agent.compress import estimate_tokens
from paicli.app.driver import run_turn
from paicli.events import NullSink
from paicli.llm.types import Message
from tests.fakellm import FakeLLM, Reply

NAME = "longchat"
TITLE = "Token economy of a long chat"
BUDGET = 8_000
USER = "Turn {turn}: look at the loader again and tell me what to change so that reloading works; keep the " \
       "public names, explain the trade-off in two sentences, and show the changed function in full."  # fmt: skip
ANSWER = "\n\n".join(
    [
        "The loader caches its result per path, so a second call never reads the file again. To make reloading "
        "work, keep the cache but key it on the file's modification time as well:",
        "```python\ndef load(path):\n    stamp = os.stat(path).st_mtime_ns\n    key = (path, stamp)\n"
        "    if key not in cache:\n        cache[key] = parse(read(path))\n    return cache[key]\n```",
        "- callers keep using `load(path)` unchanged\n- a changed file is read once more\n"
        "- old entries stay until `reset()`; with many files, bound the cache",
        "The trade-off: one `stat` per call instead of none, against never serving a stale configuration. "
        "For a file read a few times per run, the `stat` costs far less than the bug it prevents.",
    ]
)
SUMMARY = "State: the user works on the loader's cache; agreed to key it on (path, mtime); tests call reset()."


async def session(turns: int, budget: int) -> list[dict[str, Any]]:
    """Each model request of the session in order: {"turn", "compression", "tokens", "messages"}."""
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        fake.on(lambda body: not body.get("tools"), Reply.text(SUMMARY), repeat=True)  # the compressor asks
        fake.on(lambda body: bool(body.get("tools")), Reply.text(ANSWER), repeat=True)
        async with runtime_for(fake.base_url, Path(folder), context_tokens=budget) as runtime:
            messages: list[Message] = [{"role": "system", "content": runtime.system_prompt(None)}]
            turn_of_request: list[int] = []
            for turn in range(1, turns + 1):
                messages = [*messages, {"role": "user", "content": USER.format(turn=turn)}]
                seen = len(fake.requests)
                outcome = await run_turn(runtime, NullSink(), messages)
                assert outcome.result is not None, outcome.error
                messages = outcome.messages
                turn_of_request += [turn] * (len(fake.requests) - seen)
        requests = []
        for turn, request in zip(turn_of_request, fake.requests, strict=True):
            body = request.body or {}
            sent = body.get("messages", [])
            tools = len(json.dumps(body.get("tools") or [], ensure_ascii=False)) // 4
            requests.append({"turn": turn, "compression": not body.get("tools"), "tokens": estimate_tokens(sent),
                             "tool_tokens": tools, "messages": sent})  # fmt: skip
    return requests


def curve(requests: list[dict[str, Any]]) -> tuple[list[int], int, int, int]:
    """Prompt tokens of each turn's request, compressions, turns that kept the previous prefix, turns that
    did not although no compression came between."""
    tokens, compressions, kept, broken = [], 0, 0, 0
    previous: list[Any] | None = None
    compressed_since = False
    for request in requests:
        if request["compression"]:
            compressions += 1
            compressed_since = True
            continue
        tokens.append(request["tokens"])
        sent = request["messages"]
        if previous is not None:
            if sent[: len(previous)] == previous:
                kept += 1
            elif not compressed_since:
                broken += 1
        previous, compressed_since = sent, False
    return tokens, compressions, kept, broken


def run(quick: bool = False) -> Result:
    turns = 12 if quick else 50
    budget = 2_000 if quick else BUDGET
    result = Result(NAME, TITLE, details={"turns": turns, "budget_tokens": budget})
    for label, session_budget in (("compressed", budget), ("default budget", 64_000)):
        requests = asyncio.run(session(turns, session_budget))
        tokens, compressions, kept, broken = curve(requests)
        result.add(f"{label}: prompt tokens at turn 1 / {turns // 2} / {turns}",
                   f"{tokens[0]:,} / {tokens[turns // 2 - 1]:,} / {tokens[-1]:,}")  # fmt: skip
        result.add(f"{label}: largest prompt", max(tokens))
        result.add(f"{label}: compressions", compressions)
        result.add(f"{label}: turns whose prompt began with the previous one", kept)
        result.add(f"{label}: prefix changed without a compression", broken, at_most=0)
        result.details[label] = {"prompt_tokens": tokens, "compressions": compressions,
                                 "tool_schema_tokens": requests[0]["tool_tokens"]}  # fmt: skip
        if label == "compressed":
            result.add(f"{label}: largest prompt ÷ budget", max(tokens) / budget, at_most=1.0)
    return result
