"""12. The request path: what one model request costs the client, and what the candidate speed-ups give.

A bare `LLMClient.chat` with a plan task's messages and tool schemas against the fake server in its own
process (bench/fakeserver.py, zero latency): wall time per round trip (p50, p99), the client's CPU per
request (this process only: the server's is not counted), and a fan-out of 16 requests issued at once
(from the issue to the last one reaching the server, as on the makespan benchmark's fan-out; seven times,
the median). Variants one after another in each round (in turn first and last), so a busy moment of the
machine hits them alike:

  shipped              the dependencies as installed (httpx2, httpcore2)
  httpx (before)       httpx and httpcore, the stack paicli used until session 6, under the same client
                       (only when httpx is installed: `pip install httpx` for a before/after run)
  uvloop               uvloop's event loop instead of asyncio's (only when uvloop is installed)

JSON: encoding a request body and decoding a streamed reply's chunks with the standard library, and with
orjson when it is installed: the ceiling of what a faster JSON library could save per request. And where
a shipped request's time goes, by a profile of bare round trips (cProfile's own time per function,
grouped: the HTTP stack, socket calls, waiting in epoll, paicli, pydantic, json, the rest).
"""

from __future__ import annotations

import asyncio
import collections
import cProfile
import importlib.machinery
import importlib.util
import json
import pstats
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2

from bench.common import Result, median, percentile, rounded
from bench.fakeserver import ServerProcess
from bench.harness import API_KEY, make_plan, runtime_for
from paicli.llm.client import LLMClient
from paicli.llm.types import Message, ToolSpec
from paicli.plan.executor import task_messages

NAME = "requests"
TITLE = "The request path and its candidates"
FAN_OUT = 16
FAN_OUTS = 7  # per variant and round (the first opens the connections the others reuse)


def optional(name: str) -> ModuleType | None:
    return importlib.import_module(name) if importlib.util.find_spec(name) is not None else None


Variant = tuple[Callable[[Coroutine[Any, Any, Any]], Any], Callable[[], Any], Callable[[LLMClient], None]]


def variants() -> dict[str, Variant]:
    """name → (how to run a coroutine, how to make the HTTP client, how to fit the model client to it)."""
    as_is: Callable[[LLMClient], None] = lambda llm: None  # noqa: E731
    chosen: dict[str, Variant] = {"shipped": (asyncio.run, httpx2.AsyncClient, as_is)}
    if (httpx := optional("httpx")) is not None:

        def httpx_timeout(llm: LLMClient) -> None:
            llm._timeout = httpx.Timeout(120.0, connect=10.0)  # the client's own is an httpx2.Timeout

        chosen["httpx (before)"] = (asyncio.run, httpx.AsyncClient, httpx_timeout)
    if (uvloop := optional("uvloop")) is not None:
        chosen["uvloop"] = (uvloop.run, httpx2.AsyncClient, as_is)
    return chosen


async def _measure(
    base_url: str,
    variant: Variant,
    messages: list[Message],
    tools: list[ToolSpec],
    count: int,
    server: ServerProcess,
) -> dict[str, Any]:
    _run, make_http, fit = variant
    async with make_http() as http:
        llm = LLMClient(base_url=base_url, api_key=API_KEY, model="fake-model", max_attempts=1, http=http)
        fit(llm)
        await llm.chat(messages, tools=tools)  # opens the connection
        walls = []
        cpu = time.process_time()
        for _ in range(count):
            start = time.perf_counter()
            await llm.chat(messages, tools=tools)
            walls.append(time.perf_counter() - start)
        cpu = (time.process_time() - cpu) / count
        lasts = []
        for _ in range(FAN_OUTS):
            seen = len(server.requests())
            issued = time.monotonic()
            await asyncio.gather(*(llm.chat(messages, tools=tools) for _ in range(FAN_OUT)))
            lasts.append(max(request.started for request in server.requests()[seen:]) - issued)
    return {"walls": walls, "cpu": cpu, "fan_out_last": median(lasts)}


def _task_request() -> tuple[list[Message], list[ToolSpec]]:
    async def build() -> tuple[list[Message], list[ToolSpec]]:
        with tempfile.TemporaryDirectory() as folder:
            async with runtime_for("http://127.0.0.1:9/v1", Path(folder)) as runtime:
                plan = make_plan({"probe": []})
                return task_messages(runtime.system_prompt("executor"), plan, plan.tasks[0]), runtime.tools.specs()

    return asyncio.run(build())


def json_costs(messages: list[Message], tools: list[ToolSpec], repeat: int) -> dict[str, float]:
    """Microseconds to encode one request body and to decode 200 streamed chunks, per library."""
    body = {"model": "fake-model", "messages": messages, "tools": tools, "stream": True}
    chunk = json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": "some words"}, "finish_reason": None}],
        }
    ).encode()
    libraries: dict[str, tuple[Callable[[Any], Any], Callable[[bytes], Any]]] = {"json": (json.dumps, json.loads)}
    if (orjson := optional("orjson")) is not None:
        libraries["orjson"] = (orjson.dumps, orjson.loads)
    costs = {}
    for name, (dumps, loads) in libraries.items():
        start = time.process_time()
        for _ in range(repeat):
            dumps(body)
        costs[f"{name} encode"] = (time.process_time() - start) / repeat * 1e6
        start = time.process_time()
        for _ in range(repeat):
            for _ in range(200):
                loads(chunk)
        costs[f"{name} decode 200 chunks"] = (time.process_time() - start) / repeat * 1e6
    return costs


GROUPS = {
    "HTTP stack": ("httpx2", "httpcore2", "httpx", "httpcore", "h11", "anyio", "sniffio"),
    "socket calls": ("_socket.socket",),
    "waiting in epoll": ("select.epoll",),
    "paicli": ("paicli",),
    "pydantic": ("pydantic", "pydantic_core"),
    "json": ("json", "_json"),
}


def group_of(file: str, function: str) -> str:
    """A built-in's group by the name cProfile gives it, a Python function's by its package folder."""
    for group, marks in GROUPS.items():
        if (file == "~" and any(mark in function for mark in marks)) or any(f"/{mark}/" in file for mark in marks):
            return group
    return "the rest (asyncio, stdlib)"


def profile_shares(base_url: str, messages: list[Message], tools: list[ToolSpec], count: int) -> dict[str, float]:
    """Share (%) of the profiled time of `count` bare round trips, by group."""

    async def main() -> cProfile.Profile:
        async with httpx2.AsyncClient() as http:
            llm = LLMClient(base_url=base_url, api_key=API_KEY, model="fake-model", max_attempts=1, http=http)
            await llm.chat(messages, tools=tools)
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(count):
                await llm.chat(messages, tools=tools)
            profile.disable()
            return profile

    stats = pstats.Stats(asyncio.run(main()))
    groups: collections.Counter[str] = collections.Counter()
    for (file, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        groups[group_of(file, function)] += row[2]  # the function's own time
    total = sum(groups.values()) or 1.0
    return {group: 100 * seconds / total for group, seconds in groups.most_common()}


def run(quick: bool = False) -> Result:
    count, rounds = (5, 1) if quick else (200, 3)
    messages, tools = _task_request()
    chosen = variants()
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    with ServerProcess() as server:
        for round_number in range(rounds):
            order = list(chosen.items())
            for name, variant in order[::-1] if round_number % 2 else order:  # no variant always first
                samples[name].append(variant[0](_measure(server.base_url, variant, messages, tools, count, server)))
        shares = profile_shares(server.base_url, messages, tools, count)
    result = Result(NAME, TITLE, details={"requests_per_round": count, "rounds": rounds, "fan_out": FAN_OUT})
    for name, runs in samples.items():
        walls = [wall * 1000 for one in runs for wall in one["walls"]]
        result.add(f"{name}: round trip p50", percentile(walls, 50), "ms")
        result.add(f"{name}: round trip p99", percentile(walls, 99), "ms")
        result.add(f"{name}: client CPU per request", median([one["cpu"] * 1000 for one in runs]), "ms")
        fan_out = median([one["fan_out_last"] * 1000 for one in runs])
        result.add(f"{name}: {FAN_OUT} at once, the last at the server after", fan_out, "ms")
        result.details[name] = {
            "round_trip_ms": {q: rounded(percentile(walls, q)) for q in (50, 90, 99)},
            "cpu_per_request_ms": [rounded(one["cpu"] * 1000) for one in runs],
            "fan_out_last_ms": [rounded(one["fan_out_last"] * 1000) for one in runs],
        }
    costs = json_costs(messages, tools, 20 if quick else 500)
    for name, micros in costs.items():
        result.add(f"JSON: {name}", micros / 1000, "ms")
    result.details["json_us"] = {name: rounded(micros) for name, micros in costs.items()}
    result.add("shipped, profiled: " + " / ".join(shares), " / ".join(f"{share:.0f}" for share in shares.values()), "%")
    result.details["profile_share_percent"] = {group: rounded(share) for group, share in shares.items()}
    return result
