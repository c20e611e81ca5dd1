"""One connection to an MCP server through the SDK: transport, `ClientSession`, `initialize`, the tool
list, and calls. This is the only module that imports the SDK; the manager imports it once, in a worker
thread (the import takes most of a second), and only when a server is configured. What the SDK would
import later on the event loop (anyio's asyncio backend) is imported here too.

Cancelling the task awaiting `call` (ESC, Ctrl-C, SIGTERM) makes the SDK send the server
`notifications/cancelled` for that request, as the protocol says; so does a call running past its
timeout (the SDK raises `MCPError` with `REQUEST_TIMEOUT` then).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio._backends._asyncio  # anyio loads its backend on first use: here, in the thread
import httpx2
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from paicli import __version__
from paicli.mcp.server_config import McpServerConfig
from paicli.mcp.stdio import ServerProcess, stdio_transport

MAX_PAGES = 50  # tools/list pages read at most (a server that pages forever cannot hang start-up)
MAX_TOOLS = 500
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults: a response stream may stay open

for _name in ("mcp", "httpx2", "httpcore2"):  # the SDK logs; nothing of it may reach the terminal
    _logger = logging.getLogger(_name)
    _logger.addHandler(logging.NullHandler())
    _logger.propagate = False


@dataclass
class Connection:
    session: ClientSession
    tools: list[types.Tool]
    process: ServerProcess | None  # a stdio server's program; None over HTTP
    protocol: str  # the protocol version the server agreed to


class Progress(Protocol):
    """Where `connect` says how far it got (paicli.mcp.manager.Progress)."""

    stage: str
    process: Any


async def connect(
    stack: contextlib.AsyncExitStack, config: McpServerConfig, workspace: Path, progress: Progress
) -> Connection:
    """Opens the transport and the session on `stack` (left by the caller, in the same task), then runs
    `initialize` and reads every page of `tools/list`. `progress` is told what is being waited for."""
    process: ServerProcess | None = None
    if config.transport == "stdio":
        assert config.command is not None
        progress.stage = f"starting {config.command}"
        read, write, process = await stack.enter_async_context(
            stdio_transport(config.command, config.args, config.env, workspace)
        )
        progress.process = process
        streams: tuple[Any, Any] = (read, write)
    elif config.transport == "http":
        assert config.url is not None
        progress.stage = "connecting"
        client = await stack.enter_async_context(httpx2.AsyncClient(headers=config.headers, timeout=HTTP_TIMEOUT))
        streams = await stack.enter_async_context(streamable_http_client(config.url, http_client=client))
    else:
        assert config.url is not None
        progress.stage = "connecting"
        streams = await stack.enter_async_context(sse_client(config.url, headers=dict(config.headers)))
    info = types.Implementation(name="paicli", version=__version__)
    session = await stack.enter_async_context(ClientSession(streams[0], streams[1], client_info=info))
    progress.stage = "initialize"
    result = await session.initialize()
    progress.stage = "tools/list"
    return Connection(session, await list_tools(session), process, result.protocol_version)


async def list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor or len(tools) >= MAX_TOOLS:
            break
    return tools[:MAX_TOOLS]


async def call(session: ClientSession, tool: str, arguments: dict[str, Any], timeout: float) -> types.CallToolResult:
    return await session.call_tool(tool, arguments, read_timeout_seconds=timeout)


def timed_out(error: BaseException) -> bool:
    return isinstance(error, MCPError) and error.code == types.REQUEST_TIMEOUT


def connection_lost(error: BaseException) -> bool:
    """Whether the error means the connection is gone (the server exited, the HTTP server went away)."""
    if isinstance(error, MCPError):
        return error.code == types.CONNECTION_CLOSED
    return isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError | httpx2.TransportError | OSError)


def describe(error: BaseException) -> str:
    """One line for a person: the server's own message for a protocol error."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return error.message or f"error {error.code}"
    if isinstance(error, httpx2.HTTPStatusError):
        return f"HTTP {error.response.status_code} from {error.request.url}"
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
