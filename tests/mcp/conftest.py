"""The test MCP server (tests/mcp/server.py, written with the SDK's MCPServer) as paicli would start it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp.server_config import McpServerConfig

SERVER = Path(__file__).with_name("server.py")


def stdio_server(marks: Path | None = None, *args: str, **settings: Any) -> McpServerConfig:
    env = {"MCP_TEST_MARKS": str(marks)} if marks is not None else {}
    env.update(settings.pop("env", {}))
    return McpServerConfig(command=sys.executable, args=[str(SERVER), *args], env=env, **settings)


def server_toml(name: str, marks: Path | None = None, *args: str, **settings: Any) -> str:
    """A [mcp_servers.NAME] table for the test server (values written as TOML)."""
    env = {"MCP_TEST_MARKS": str(marks)} if marks is not None else {}
    env.update(settings.pop("env", {}))
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {_toml(sys.executable)}",
        f"args = [{', '.join(_toml(a) for a in [str(SERVER), *args])}]",
        "env = { " + ", ".join(f"{k} = {_toml(v)}" for k, v in env.items()) + " }",
    ]
    lines += [f"{key} = {_toml(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def pids(marks: Path) -> list[int]:
    """The pids of the test servers started with this marks folder."""
    file = marks / "pids"
    return [int(line) for line in file.read_text().split()] if file.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by a parent that is not us) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid_list: list[int], timeout: float = 15.0) -> list[int]:
    """The pids still alive after waiting up to `timeout` seconds for them to go."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(pid) for pid in pid_list):
        time.sleep(0.05)
    return [pid for pid in pid_list if alive(pid)]


def read_marks(marks: Path, name: str) -> list[str]:
    file = marks / name
    return file.read_text().split() if file.exists() else []


def wait_for_mark(marks: Path, name: str, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_marks(marks, name):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The test server over streamable HTTP on 127.0.0.1, once per module: (its URL, its marks folder)."""
    yield from _network_server(tmp_path_factory, "--http", "/mcp")


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The test server over the older SSE transport on 127.0.0.1, once per module."""
    yield from _network_server(tmp_path_factory, "--sse", "/sse")


def _network_server(factory: pytest.TempPathFactory, flag: str, path: str) -> Iterator[tuple[str, Path]]:
    marks = factory.mktemp("http-marks")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), flag, str(port)],
        env={**os.environ, "MCP_TEST_MARKS": str(marks)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the HTTP test server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}{path}", marks
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
