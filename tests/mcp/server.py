"""A real MCP server for the tests, written with the SDK's own server API (MCPServer).

    python tests/mcp/server.py                    stdio
    python tests/mcp/server.py --http PORT        streamable HTTP on 127.0.0.1:PORT, path /mcp
    python tests/mcp/server.py --sse PORT         the older SSE transport on 127.0.0.1:PORT, path /sse
    python tests/mcp/server.py --exit-at-start    writes to stderr and exits 3 before reading anything
    python tests/mcp/server.py --never-initialize reads stdin and never answers

Tools: add (read-only hint), echo, boom (raises), slow (sleeps; a cancellation is recorded), leak (prints
$LEAK, a fake secret), crash (kills its own process mid-call), header (an HTTP request header), whoami
(its pid and working folder), and awkward (an odd name and a schema with keywords OpenAI does not take).
$MCP_TEST_MARKS names a folder where slow writes `cancelled` when the client cancels it, and every call
appends its tool to `calls`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

AWKWARD_NAME = "weird name/with.dots-and-a-very-long-tail-" + "x" * 40
server = MCPServer("paicli-test")


def mark(name: str, text: str = "") -> None:
    folder = os.environ.get("MCP_TEST_MARKS")
    if folder:
        with open(Path(folder) / name, "a", encoding="utf-8") as file:
            file.write(text + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers. Returns their sum."""
    mark("calls", "add")
    return str(a + b)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    mark("calls", "echo")
    return f"echo: {text}"


@server.tool()
def boom() -> str:
    """Always fails."""
    mark("calls", "boom")
    raise ValueError("kaboom")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for a number of seconds."""
    mark("calls", "slow")
    try:
        await anyio.sleep(seconds)
    except BaseException:
        mark("cancelled", "slow")
        raise
    return f"slept {seconds}"


@server.tool()
def leak() -> str:
    """Print a value from the environment."""
    mark("calls", "leak")
    return f"the token is {os.environ.get('LEAK', '')} (keep it safe)"


@server.tool()
def crash() -> str:
    """Kill the server mid-call."""
    mark("calls", "crash")
    print("about to crash", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header (over HTTP)."""
    headers = ctx.headers or {}
    return str(headers.get(name.lower(), "(none)"))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def whoami() -> str:
    """The server's pid and working folder."""
    return f"{os.getpid()} {os.getcwd()}"


class Filter(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"kind": {"const": "x"}}},
            "then": {"required": ["value"]},
            "patternProperties": {"^x-": {"type": "string"}},
        }
    )
    kind: str
    value: str | None = None


@server.tool(name=AWKWARD_NAME)
def awkward(
    query: Annotated[str, Field(json_schema_extra={"$comment": "c", "examples": ["a"], "contentMediaType": "text/x"})],
    filter: Filter | None = None,
) -> str:
    """A tool with an awkward name and schema."""
    return f"awkward {query} {filter.kind if filter else '-'}"


def main(argv: list[str]) -> None:
    mark("pids", str(os.getpid()))
    if "--exit-at-start" in argv:
        print("fatal: the test server was told to exit at start", file=sys.stderr, flush=True)
        sys.exit(3)
    if "--never-initialize" in argv:
        print("listening, but never answering", file=sys.stderr, flush=True)
        for _ in sys.stdin:
            pass
        time.sleep(60)
        return
    if "--http" in argv:
        port = int(argv[argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
        return
    if "--sse" in argv:
        port = int(argv[argv.index("--sse") + 1])
        server.run("sse", host="127.0.0.1", port=port)
        return
    server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
