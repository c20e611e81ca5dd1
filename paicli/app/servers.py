"""MCP servers in both front ends: the REPL starts them once its first prompt is on screen and never
waits for them (their tools join when ready); headless runs and interactive `paicli plan` start them
at once and wait until each is ready or has failed (each has its startup_timeout), then say what failed,
so the model's first request already carries every tool that could be had."""

from __future__ import annotations

import asyncio

from paicli.common.events import EventSink, Notice
from paicli.mcp import sdk
from paicli.runtime import Runtime


def start_servers_after_this_step(runtime: Runtime) -> None:
    """Starts the MCP servers on the event loop's next step: called while the REPL draws its prompt, so
    that drawing (and the keys typed next) never waits for loading paicli/mcp or starting a server."""
    if runtime.settings.mcp_servers and runtime.mcp is None:
        asyncio.get_running_loop().call_soon(runtime.start_mcp)


async def settle_servers(runtime: Runtime, sink: EventSink) -> None:
    """Starts the servers and waits until none is starting; a failed one, and each tool schema keyword
    dropped, becomes a notice."""
    runtime.start_mcp()
    if runtime.mcp is None:
        return
    await runtime.mcp.settled()
    for view in runtime.mcp.views():
        if view.status == "failed" and view.detail != sdk.NOT_INSTALLED:  # that one build_runtime said once
            last = f" (its stderr: {view.stderr[-1]})" if view.stderr else ""
            sink.emit(Notice(level="warning", message=f"MCP server {view.name} is not available: {view.detail}{last}"))
        for note in view.notes:
            sink.emit(Notice(level="info", message=f"MCP server {view.name}: {note}"))
