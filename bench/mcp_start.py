"""Helpers of the startup benchmark for MCP servers (issue 13), each run in a fresh interpreter:

    python -m bench.mcp_start prompt   ms that two configured servers add before the REPL's first prompt
    python -m bench.mcp_start stall    the event loop's longest stall (ms) while two servers start and get
                                       ready, and the same loop's longest stall while idle as long

The REPL's first prompt is drawn before paicli/mcp is even loaded (paicli/ui/repl.py), so the first
figure is everything MCP adds before it; the second says how long a key could wait while they start (the SDK's
import runs in a worker thread, the rest of a start on the loop)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "server.py"


def prompt_cost() -> float:
    """What two configured servers add before the prompt: their settings read, the runtime built (the
    servers themselves start after the prompt is drawn)."""
    import paicli.ui.repl  # noqa: F401  everything the REPL imports anyway
    from paicli.common.events import AnyEvent
    from paicli.config import Settings
    from paicli.runtime import build_runtime

    class Sink:
        def emit(self, event: AnyEvent) -> None:
            pass

    table = {f"s{i}": {"command": sys.executable, "args": [str(SERVER)]} for i in range(2)}
    costs: list[float] = []
    for servers in ({}, table, {}, table):
        start = time.perf_counter()
        settings = Settings.model_validate({"api_key": "bench-key", "workspace": ".", "mcp_servers": servers})
        build_runtime(settings, Sink())
        costs.append((time.perf_counter() - start) * 1000)
    return max(0.0, min(costs[1], costs[3]) - min(costs[0], costs[2]))


async def _longest_stall(until: asyncio.Future[None] | None, seconds: float) -> float:
    longest, last = 0.0, time.perf_counter()
    deadline = last + seconds
    while (until is not None and not until.done()) or (until is None and time.perf_counter() < deadline):
        await asyncio.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    return longest * 1000


async def stalls() -> tuple[float, float, float]:
    """(stall while starting, seconds the start took, stall idle for as long)."""
    import paicli.ui.repl  # noqa: F401
    from paicli.mcp.manager import McpManager
    from paicli.mcp.server_config import McpServerConfig

    servers = {
        f"s{i}": McpServerConfig.model_validate({"command": sys.executable, "args": [str(SERVER)]}) for i in range(2)
    }
    manager = McpManager(servers, workspace=Path("."), env={})
    start = time.perf_counter()
    manager.start()
    settled = asyncio.ensure_future(manager.settled())
    busy = await _longest_stall(settled, 0)
    took = time.perf_counter() - start
    assert all(view.status == "ready" for view in manager.views()), manager.views()
    await manager.aclose()
    return busy, took, await _longest_stall(None, took)


if __name__ == "__main__":
    if sys.argv[1] == "prompt":
        print(f"{prompt_cost():.3f}")
    else:
        print(" ".join(f"{value:.3f}" for value in asyncio.run(stalls())))
