"""MCP servers in both front ends: the REPL starts them once its first prompt is on screen and never
waits for them (their tools join when ready); headless runs and interactive `paicli plan` start them
at once and wait until each is ready or has failed (each has its startup_timeout), then say what failed,
so the model's first request already carries every tool that could be had."""

from __future__ import annotations

from paicli.events import EventSink, Notice
from paicli.runtime import Runtime


def start_servers(runtime: Runtime) -> None:
    """Starts the configured MCP servers in the background, once; returns at once."""
    if runtime.mcp is not None and not runtime.mcp.started:
        runtime.mcp.start()


async def settle_servers(runtime: Runtime, sink: EventSink) -> None:
    """Starts the servers and waits until none is starting; a failed one, and each tool schema keyword
    dropped, becomes a notice."""
    if runtime.mcp is None:
        return
    start_servers(runtime)
    await runtime.mcp.settled()
    for view in runtime.mcp.views():
        if view.status == "failed":
            last = f" (its stderr: {view.stderr[-1]})" if view.stderr else ""
            sink.emit(Notice(level="warning", message=f"MCP server {view.name} is not available: {view.detail}{last}"))
        for note in view.notes:
            sink.emit(Notice(level="info", message=f"MCP server {view.name}: {note}"))
