"""The MCP servers of one paicli process: started in the background, their tools offered when ready.

Each server has one long-lived owner task (`McpServer._own`) that enters the SDK's transport and
session and leaves them again: the SDK's context managers must be entered and exited by the same task.
Tool calls are made from the caller's task on the owner's session. Nothing here imports the SDK: the
first owner imports paicli.mcp.connection in a worker thread, so the event loop (and the prompt the
user is typing at) never waits for it.

Status of a server: `starting`, `ready`, `failed` (with why, and the last lines of its stderr),
`stopped`, `disabled` (`enabled = false`). A server that fails after it was ready keeps its tools: the
next call to one of them restarts it (and says so if that fails). A failed start is not retried until
one of its tools is called or the user asks (`/mcp restart NAME`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from paicli.mcp import sdk
from paicli.mcp.schema import tool_names
from paicli.mcp.server_config import McpServerConfig, expanded
from paicli.mcp.tool import McpTool, make_tool
from paicli.tools.base import ToolFailure

Status = Literal["starting", "ready", "failed", "stopped", "disabled"]
STOP_WAIT = 8.0  # seconds a stopping server may take (its program gets 1 s, then SIGTERM, then SIGKILL)
CRASH_WAIT = 2.0  # seconds a call that lost its connection waits to learn the exit code


@dataclass
class Progress:
    """How far a start got (paicli.mcp.connection.connect fills it in): what is awaited, and the
    program of a stdio server once it runs."""

    stage: str = "starting"
    process: Any = None  # paicli.mcp.stdio.ServerProcess


@dataclass(frozen=True)
class ServerView:
    """What `/mcp` shows of a server."""

    name: str
    status: Status
    transport: str
    tools: int
    detail: str  # why it failed, what it waits for, or the protocol version
    stderr: tuple[str, ...]  # the last lines of a stdio server's stderr
    notes: tuple[str, ...]  # schema keywords dropped, per tool


class Loader:
    """Imports paicli.mcp.connection (and so the SDK) once, in a worker thread."""

    def __init__(self) -> None:
        self._task: asyncio.Future[ModuleType] | None = None

    async def __call__(self) -> ModuleType:
        if self._task is None:
            self._task = asyncio.ensure_future(asyncio.to_thread(importlib.import_module, "paicli.mcp.connection"))
        return await asyncio.shield(self._task)


class McpServer:
    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        workspace: Path,
        env: Mapping[str, str],
        load: Loader,
        on_change: Callable[[], None],
    ) -> None:
        self.name = name
        self.config = config
        self.status: Status = "stopped" if config.enabled else "disabled"
        self.detail = ""
        self.tools: list[McpTool] = []
        self.notes: list[str] = []
        self._stderr: tuple[str, ...] = ()
        self._workspace, self._env, self._load, self._on_change = workspace, env, load, on_change
        self._connection: Any = None  # paicli.mcp.connection.Connection while ready
        self._module: ModuleType | None = None
        self._owner: asyncio.Task[None] | None = None
        self._progress = Progress()
        self._settled = asyncio.Event()
        self._restarting = asyncio.Lock()

    # ---- lifecycle ----

    def start(self) -> None:
        """Starts the owner task (returns at once); nothing when disabled or already running."""
        if not self.config.enabled or (self._owner is not None and not self._owner.done()):
            return
        self._settled = asyncio.Event()
        self._set("starting", "")
        self._owner = asyncio.create_task(self._own(), name=f"mcp server {self.name}")

    async def settled(self) -> None:
        """Waits until a start has ended, ready or failed."""
        if self.status == "starting":
            await self._settled.wait()

    async def stop(self) -> None:
        owner = self._owner
        if owner is not None and not owner.done():
            owner.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(owner), STOP_WAIT)
        if self.status in ("starting", "ready"):
            self._set("stopped", "")

    async def restart(self) -> None:
        """Stops the server if it runs, starts it again and waits for the outcome."""
        await self.stop()
        self.start()
        await self.settled()

    async def _own(self) -> None:
        progress = self._progress = Progress()
        try:
            if self.config.sandbox and self.config.transport == "stdio":
                raise _NotStarted("sandbox = true, but this paicli has no command sandbox yet: not started")
            config = expanded(self.config, self._env)
            module = self._module = await self._load()
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self.config.startup_timeout):
                        connection = await module.connect(stack, config, self._workspace, progress)
                except TimeoutError:
                    raise _NotStarted(
                        f"no answer to {progress.stage} within {self.config.startup_timeout:g} s (startup_timeout)"
                    ) from None
                await self._ready(connection)
                process = progress.process
                await (process.closed.wait() if process is not None else asyncio.Event().wait())
                self._set(
                    "failed",
                    f"{_exited(await process.exit_code()) if process else 'closed'}; "
                    "a call to one of its tools starts it again",
                )
        except asyncio.CancelledError:
            raise
        except Exception as raised:
            self._set("failed", await self._why(_unwrap(raised), progress))
        finally:
            if progress.process is not None:
                self._stderr = tuple(progress.process.stderr)
            self._connection = None
            self._settled.set()
            self._on_change()

    async def _why(self, error: BaseException, progress: Progress) -> str:
        if isinstance(error, _NotStarted | ValueError):  # ValueError: a ${VAR} that is not set
            return str(error)
        if isinstance(error, OSError) and progress.process is None:
            return f"cannot start {self.config.command}: {error.strerror or error}"
        if sdk.missing(error):
            return sdk.NOT_INSTALLED
        if self._module is None:
            return f"cannot load the MCP SDK: {type(error).__name__}: {error}"
        process = progress.process
        exited = f" ({_exited(await process.exit_code(CRASH_WAIT))})" if process is not None else ""
        return f"failed during {progress.stage}: {self._module.describe(error)}{exited}"

    async def _ready(self, connection: Any) -> None:
        names = tool_names(self.name, [tool.name for tool in connection.tools])
        tools: list[McpTool] = []
        notes: list[str] = []
        for name, remote in zip(names, connection.tools, strict=True):
            tool, dropped = make_tool(
                self.name, name, remote, self.call, trust_annotations=self.config.trust_annotations
            )
            await asyncio.sleep(0)  # a few ms per tool: the prompt gets its turn between two
            tools.append(tool)
            if dropped:
                notes.append(
                    f"{name}: dropped schema keywords {', '.join(dropped[:8])}"
                    + (f" and {len(dropped) - 8} more" if len(dropped) > 8 else "")
                )
        self.tools, self.notes, self._connection = tools, notes, connection
        self._set("ready", f"protocol {connection.protocol}")
        self._settled.set()

    # ---- calls ----

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Calls `tool` on this server (starting it again if it has stopped); ToolFailure when it cannot."""
        if self.status in ("failed", "stopped"):
            async with self._restarting:
                if self.status in ("failed", "stopped"):
                    await self.restart()
        await self.settled()
        connection, module = self._connection, self._module
        if self.status != "ready" or connection is None or module is None:
            raise ToolFailure(f"the MCP server {self.name} is not available: {self.detail or self.status}")
        try:
            return await module.call(connection.session, tool, arguments, self.config.tool_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if module.timed_out(error):
                raise ToolFailure(
                    f"{tool} on the MCP server {self.name} timed out after {self.config.tool_timeout:g} s "
                    "(tool_timeout); the server was told to cancel it"
                ) from None
            process = connection.process
            if module.connection_lost(error) or (process is not None and process.closed.is_set()):
                raise ToolFailure(await self._lost(connection)) from None
            raise ToolFailure(f"the MCP server {self.name} answered: {module.describe(error)}") from None

    async def _lost(self, connection: Any) -> str:
        """The connection died during a call: the server is marked failed (its next call restarts it)."""
        process = connection.process
        code = await process.exit_code(CRASH_WAIT) if process is not None else None
        if self._connection is connection:
            await self.stop()
            self._set("failed", f"the connection was lost during a call ({_exited(code)})")
        last = f"; its last stderr line: {self.stderr[-1]}" if self.stderr else ""
        return (
            f"the MCP server {self.name} stopped during the call ({_exited(code)}){last}; "
            "it is started again on the next call"
        )

    # ---- what is shown ----

    @property
    def stderr(self) -> tuple[str, ...]:
        process = self._progress.process if self._owner is not None and not self._owner.done() else None
        return tuple(process.stderr) if process is not None else self._stderr

    def view(self) -> ServerView:
        return ServerView(
            self.name, self.status, self.config.transport, len(self.tools), self.detail, self.stderr, tuple(self.notes)
        )

    def _set(self, status: Status, detail: str) -> None:
        self.status, self.detail = status, detail
        self._on_change()


class McpManager:
    """The configured servers, in configuration order."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        workspace: Path,
        env: Mapping[str, str],
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.on_change = on_change
        load = Loader()
        self.servers = {
            name: McpServer(name, config, workspace=workspace, env=env, load=load, on_change=self._changed)
            for name, config in servers.items()
        }
        self.started = False

    def start(self) -> None:
        """Starts every enabled server in the background; returns at once."""
        self.started = True
        for server in self.servers.values():
            server.start()

    async def settled(self) -> None:
        """Waits until no server is starting (each has a startup_timeout)."""
        await asyncio.gather(*(server.settled() for server in self.servers.values()))

    def tools(self) -> list[McpTool]:
        return [tool for server in self.servers.values() for tool in server.tools]

    def views(self) -> list[ServerView]:
        return [server.view() for server in self.servers.values()]

    def server(self, name: str) -> McpServer | None:
        return self.servers.get(name)

    async def aclose(self) -> None:
        await asyncio.gather(*(server.stop() for server in self.servers.values()))

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


class _NotStarted(Exception):
    """Why a server was not started, or gave up starting, in words for the user."""


def _unwrap(error: BaseException) -> BaseException:
    """The one exception inside task-group wrappers (anyio groups what its tasks raise)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _exited(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exited with code {code}"
