"""5. Planner-output robustness: the corpus of planner replies and its mutations (bench/mutations.py)
through `parse_plan_reply` (and the plan contract, for the replies labelled with it); a sample also
travels as byte-split SSE through the fake server and the real `LLMClient` first. Plus the p99 parse time
of 100 KB replies of several shapes.

Outcomes: accepted correctly (the expected plan, nothing else), rejected with a useful error (a one-line
PlanError naming the problem, e.g. "unterminated", "cycle"), false accepts (a plan accepted where the
reply had to be rejected, or a different plan than the reply holds; target 0), crashes (any other
exception; target 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from bench.common import Result, percentile, rounded
from bench.mutations import Trial, trials
from paicli.common.errors import PlanError
from paicli.llm.client import LLMClient
from paicli.llm.think import split_reply
from paicli.plan.parse_reply import parse_plan_reply
from tests.fakellm import FakeLLM, Reply
from tests.plan.corpus import plan_json, task
from tests.plan.corpus_contract import contract_workspace, planner_accepts

NAME = "parse"
TITLE = "Planner-output robustness"
SSE_SAMPLE = 40


def classify(trial: Trial, workspace: Path, text: str | None = None, finish_reason: str | None = None) -> str:
    """One of: accepted, rejected (useful), rejected (unhelpful), false accept, wrongly rejected, crashed."""
    reply = trial.reply if text is None else text
    reason = trial.finish_reason if text is None else finish_reason
    try:
        plan = planner_accepts(
            reply,
            finish_reason=reason,
            workspace=workspace if trial.contract else None,
            max_tasks=trial.max_tasks,
            external_ids=trial.external_ids,
        )
    except PlanError as error:
        if trial.must_accept:
            return "wrongly rejected"
        message = str(error)
        useful = "\n" not in message and any(hint in message for hint in trial.hints)
        return "rejected (useful)" if useful else "rejected (unhelpful)"
    except Exception:
        return "crashed"
    label = trial.label
    return "accepted" if label is not None and label.matches(plan) else "false accept"


def run(quick: bool = False) -> Result:
    every = trials()
    if quick:
        every = every[:: max(1, len(every) // 60)]
    rng = random.Random(5)
    sample = rng.sample(every, min(len(every), 8 if quick else SSE_SAMPLE))
    sample += [t for t in every if t.name == "unicode" and t not in sample]  # multi-byte characters split
    with tempfile.TemporaryDirectory() as folder:
        workspace = contract_workspace(Path(folder))
        outcomes = [(trial, classify(trial, workspace)) for trial in every]
        sse = asyncio.run(_through_sse(sample, rng, workspace))
    outcomes += sse
    result = Result(NAME, TITLE)
    _add_outcomes(result, outcomes)
    intact = sum(outcome != "changed in transit" for _, outcome in sse)
    result.add("SSE byte splits: text intact", 100 * intact / len(sse), "%", at_least=100.0)
    _add_timing(result, repeats=5 if quick else 40)
    return result


def _add_outcomes(result: Result, outcomes: list[tuple[Trial, str]]) -> None:
    must_accept = [o for t, o in outcomes if t.must_accept]
    must_reject = [o for t, o in outcomes if t.must_reject]
    either = [o for t, o in outcomes if t.either]
    result.add("cases (corpus + mutations + SSE)", len(outcomes), at_least=200)
    result.add("accepted correctly", 100 * must_accept.count("accepted") / len(must_accept), "%", at_least=100.0)
    result.add(
        "rejected with a useful error",
        100 * must_reject.count("rejected (useful)") / len(must_reject),
        "%",
        at_least=100.0,
    )
    handled = sum(o in ("accepted", "rejected (useful)") for o in either)
    result.add("cut off with stop: rejected or the full plan", 100 * handled / max(1, len(either)), "%", at_least=100.0)
    result.add("false accepts", sum(o == "false accept" for _, o in outcomes), at_most=0)
    result.add("crashes", sum(o == "crashed" for _, o in outcomes), at_most=0)
    by_origin: dict[str, Counter[str]] = {}
    for trial, outcome in outcomes:
        by_origin.setdefault(trial.origin, Counter())[outcome] += 1
    result.details["outcomes_by_origin"] = {origin: dict(counts) for origin, counts in by_origin.items()}
    result.details["not_as_expected"] = [
        {"name": t.name, "origin": t.origin, "outcome": o}
        for t, o in outcomes
        if o not in ("accepted", "rejected (useful)")
    ][:50]


# ---- through the wire ----------------------------------------------------------------------------------


def sse_bytes(text: str, finish_reason: str | None, rng: random.Random) -> bytes:
    """A streamed completion of `text` in content pieces of 1 to 20 characters."""

    def frame(delta: dict[str, object], finish: str | None = None) -> bytes:
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"

    frames = [frame({"role": "assistant", "content": ""})]
    position = 0
    while position < len(text):
        size = rng.randint(1, 20)
        frames.append(frame({"content": text[position : position + size]}))
        position += size
    frames += [frame({}, finish_reason), b"data: [DONE]\n\n"]
    return b"".join(frames)


def byte_split(data: bytes, rng: random.Random) -> list[bytes]:
    """The stream cut at random byte offsets (inside frames, lines and multi-byte characters)."""
    parts, position = [], 0
    while position < len(data):
        size = rng.randint(1, 24)
        parts.append(data[position : position + size])
        position += size
    return parts


async def _through_sse(sample: list[Trial], rng: random.Random, workspace: Path) -> list[tuple[Trial, str]]:
    outcomes = []
    with FakeLLM() as fake:
        for number, trial in enumerate(sample):
            parts = byte_split(sse_bytes(trial.reply, trial.finish_reason, rng), rng)
            fake.on(f"trial {number};", Reply.raw(parts, chunk_delay=0.0002))
        client = LLMClient(base_url=fake.base_url, api_key="bench-key-0000", model="m", max_attempts=1)
        try:
            for number, trial in enumerate(sample):
                response = await client.chat([{"role": "user", "content": f"trial {number};"}])
                wire = replace(trial, name=f"{trial.name} [SSE split]", origin="SSE split")
                reasoning, content = split_reply(trial.reply)  # a leading <think> block is the reasoning
                if (response.content, response.reasoning, response.finish_reason) != (
                    content,
                    reasoning,
                    trial.finish_reason,
                ):
                    outcomes.append((wire, "changed in transit"))
                else:
                    outcomes.append((wire, classify(wire, workspace, response.content, response.finish_reason)))
        finally:
            await client.aclose()
    return outcomes


# ---- time ------------------------------------------------------------------------------------------------


def hundred_kb_replies() -> dict[str, tuple[str, str]]:
    """Replies of about 100 KB: name → (text, finish_reason)."""
    steps = [
        task(
            f"task_{i}",
            f"Step {i}: " + "change the module carefully and keep its tests green, " * 36,
            "FILE_WRITE",
            [f"task_{i - 1}"] if i else [],
        )
        for i in range(50)
    ]
    plain = plan_json(*steps)
    return {
        "50-task plan": (plain, "stop"),
        "fenced, with prose": (f"Here is the plan.\n\n```json\n{plain}\n```\n\nShall I start?", "stop"),
        "trailing commas": (plain.replace("]\n    }", "],\n    }"), "stop"),
        "cut off": (plain[: len(plain) - 40], "stop"),
        "prose around a small plan": ("Let me think. " * 7300 + plan_json(task("a", "x")), "stop"),
    }


def _add_timing(result: Result, repeats: int) -> None:
    p99s = {}
    for name, (text, finish_reason) in hundred_kb_replies().items():
        samples = []
        for _ in range(repeats):
            start = time.process_time()
            with contextlib.suppress(PlanError):
                parse_plan_reply(text, finish_reason=finish_reason, goal="g")
            samples.append(time.process_time() - start)
        p99s[name] = percentile(samples, 99) * 1000
        result.details[f"parse_100kb_{name}"] = {
            "bytes": len(text.encode()),
            "p50_ms": rounded(percentile(samples, 50) * 1000),
            "p99_ms": rounded(p99s[name]),
        }
    worst = max(p99s, key=p99s.__getitem__)
    result.add(f"100 KB reply: parse p99, worst shape ({worst})", p99s[worst], "ms")
