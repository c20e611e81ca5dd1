"""Unix sockets on the filesystem outside the hidden folders (a Docker or LXD socket is root on the host):
a sandboxed command cannot connect to them, with real listeners under /var/tmp and in the home folder.
With `sandbox_network = true` they stay reachable, as before."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext
from tests.sandbox.test_bwrap import run
from tests.sandboxing import bwrap_sandbox

CONNECT = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(9))' {}"


@contextmanager
def listener(path: Path) -> Iterator[list[bytes]]:
    """A Unix socket server at `path` that greets every client; yields what it was sent."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    accepted: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            client.sendall(b"HOST-ROOT")
            accepted.append(b"x")
            client.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        server.close()
        thread.join(2)
        # the socket file stays (dead): other workers' sandboxes may be about to cover it, and bwrap cannot
        # mount over a path that went away in between (their command would fail); var_tmp sweeps it later


SWEEP_AFTER = 3600.0  # seconds: a test folder in /var/tmp this old belongs to no running test session


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    """A folder in /var/tmp, where every sandbox on the machine looks for sockets to cover. It is left in
    place after the test (removing it while another worker's command is being set up failed that command)
    and swept by a later session once it is an hour old."""
    for old in Path("/var/tmp").glob("paicli-test-*"):
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > SWEEP_AFTER:
                shutil.rmtree(old, ignore_errors=True)
    folder = Path("/var/tmp") / f"paicli-test-{uuid.uuid4().hex[:8]}" / "deep"
    folder.mkdir(parents=True)
    yield folder


@pytest.mark.parametrize("where", ["var_tmp", "home"])
async def test_a_socket_outside_the_hidden_folders_cannot_be_reached(
    where: str, var_tmp: Path, workspace: Path, fake_home: Path
) -> None:
    folder = var_tmp if where == "var_tmp" else fake_home / ".d" / "x"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "docker.sock"
    with listener(path) as accepted:
        ctx = ToolContext(workspace=workspace, sandbox=bwrap_sandbox(workspace, fake_home), command_timeout=30)
        output = await run(ctx, CONNECT.format(path) + "; ls -la " + str(folder))
        assert "HOST-ROOT" not in output and accepted == [], output
        assert "Connection refused" in output, output
        # the host still reaches it
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(path))
        assert client.recv(9) == b"HOST-ROOT"
        client.close()


async def test_with_the_network_on_sockets_stay_reachable(var_tmp: Path, workspace: Path, fake_home: Path) -> None:
    path = var_tmp / "agent.sock"
    with listener(path):
        sandbox = bwrap_sandbox(workspace, fake_home, network=True)
        ctx = ToolContext(workspace=workspace, sandbox=sandbox, command_timeout=30)
        output = await run(ctx, CONNECT.format(path))
        assert "HOST-ROOT" in output, output


async def test_the_workspace_and_the_private_tmp_keep_their_own_sockets(workspace: Path, fake_home: Path) -> None:
    ctx = ToolContext(workspace=workspace, sandbox=bwrap_sandbox(workspace, fake_home), command_timeout=30)
    serve = (
        "import socket,os,sys\n"
        "for p in (sys.argv[1], '/tmp/t.sock'):\n"
        "    s=socket.socket(socket.AF_UNIX); s.bind(p); s.listen()\n"
        "    c=socket.socket(socket.AF_UNIX); c.connect(p); print('ok', os.path.basename(p))\n"
    )
    (workspace / "serve.py").write_text(serve)
    output = await run(ctx, "python3 serve.py ws.sock")
    assert "ok ws.sock" in output and "ok t.sock" in output, output
    assert os.path.exists(workspace / "ws.sock")


async def test_a_listener_started_after_paicli_is_covered_too(var_tmp: Path, workspace: Path, fake_home: Path) -> None:
    ctx = ToolContext(workspace=workspace, sandbox=bwrap_sandbox(workspace, fake_home), command_timeout=30)
    assert "exit code 0" in await run(ctx, "true")  # the sandbox has looked for sockets once already
    for path in (var_tmp / "late.sock", fake_home / ".n" / "a.sock"):
        path.parent.mkdir(parents=True, exist_ok=True)
        with listener(path) as accepted:
            output = await run(ctx, CONNECT.format(path))
            assert "HOST-ROOT" not in output and accepted == [] and "Connection refused" in output, output
