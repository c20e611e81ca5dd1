"""The stdio transport: a server program paicli starts, newline-delimited JSON-RPC on its stdin and
stdout, carried as the SDK's `SessionMessage`s for its `ClientSession`.

paicli's own rather than the SDK's `stdio_client` because paicli needs what that one keeps to itself:
the process (its exit code and the moment it dies, also while no call is running, so `/mcp` can say
so), the last lines of its stderr (bounded, never on the terminal), and the whole process group
killed when the server stops, so a server that exits politely cannot leave a child behind.

The server runs in the workspace, in its own session (Ctrl-C at the terminal does not reach it), with
the SDK's small default environment (HOME, PATH, USER, ...) plus the `env` of its config: nothing of
paicli's own environment, no API key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from paicli.common.sanitize import well_formed_json

MAX_MESSAGE = 32 << 20  # bytes of one JSON-RPC line; a longer one ends the connection
STDERR_LINES = 20
STDERR_LINE_CHARS = 400
EXIT_GRACE = 1.0  # seconds a server gets to exit after its stdin closes, then SIGTERM, then SIGKILL


@dataclass
class ServerProcess:
    """The running program: its pid, the last lines of its stderr, and whether it has stopped."""

    process: asyncio.subprocess.Process
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    closed: asyncio.Event = field(default_factory=asyncio.Event)  # its stdout ended: it exited (or will)

    @property
    def pid(self) -> int:
        return self.process.pid

    async def exit_code(self, wait: float = 1.0) -> int | None:
        """Its exit code, waiting up to `wait` seconds for it to exit; None while it runs."""
        deadline = asyncio.get_running_loop().time() + wait
        while self.process.returncode is None and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        return self.process.returncode


ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str, args: list[str], env: dict[str, str], workspace: Path
) -> AsyncIterator[tuple[ReadStream, WriteStream, ServerProcess]]:
    """Starts the program (OSError when it cannot be) and yields the session's streams and the process.
    Leaving stops it: stdin closed, then SIGTERM and SIGKILL to its process group, even when cancelled."""
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workspace,
        env={**get_default_environment(), **env},
        start_new_session=True,
        limit=MAX_MESSAGE,
    )
    server = ServerProcess(process)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            async with read_send:
                while line := await process.stdout.readline():
                    if line.strip():
                        await read_send.send(_message(line))
        except (ValueError, asyncio.LimitOverrunError):
            server.stderr.append(f"[paicli: a message over {MAX_MESSAGE >> 20} MB; connection closed]")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass
        finally:
            server.closed.set()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_receive:
                async for message in write_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    process.stdin.write(data.encode("utf-8"))
                    await process.stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
            await read_send.aclose()  # the session sees the connection end instead of waiting forever

    async def read_stderr() -> None:
        assert process.stderr is not None
        partial = b""
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await process.stderr.read(1 << 14):
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-4 * STDERR_LINE_CHARS :]
                server.stderr.extend(_line(raw) for raw in lines if raw.strip())
        if partial.strip():
            server.stderr.append(_line(partial))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        tasks.start_soon(read_stderr)
        try:
            yield read_receive, write_send, server
        finally:
            with anyio.CancelScope(shield=True):
                await stop_process(server)
                for stream in (read_receive, write_send, read_send, write_receive):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def stop_process(server: ServerProcess) -> None:
    """Close its stdin, give it EXIT_GRACE to exit, then SIGTERM and SIGKILL its process group; the group
    is killed in the end in any case, so no child of the server outlives it."""
    process = server.process
    if process.stdin is not None:
        process.stdin.close()
    if await server.exit_code(EXIT_GRACE) is None:
        _signal_group(process.pid, signal.SIGTERM)
        if await server.exit_code(EXIT_GRACE) is None:
            _signal_group(process.pid, signal.SIGKILL)
            await server.exit_code(EXIT_GRACE)
    _signal_group(process.pid, signal.SIGKILL)  # what it left behind in its group


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:  # not JSON-RPC (a server printing logs on stdout): the session is told
        try:  # pydantic's JSON reader refuses a lone surrogate (`"\\ud800"`): Python's takes it, made U+FFFD
            decoded = well_formed_json(json.loads(line))
            return SessionMessage(jsonrpc_message_adapter.validate_python(decoded, by_name=False))
        except (ValueError, RecursionError):
            return error


def _line(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").rstrip()
    return text if len(text) <= STDERR_LINE_CHARS else text[: STDERR_LINE_CHARS - 1] + "…"
