"""Commands run in real bubblewrap through execute_command: what they can write, read, reach and leave
behind. Every write a test expects to fail targets a folder of the test's own, so a broken sandbox fails
the test without harming the machine."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from paicli.sandbox import BwrapSandbox
from paicli.tools.base import SandboxBlocked, ToolContext, ToolFailure
from paicli.tools.builtin.execute_command import ExecuteCommand, ExecuteCommandArgs
from tests.repos import git_init
from tests.sandboxing import bwrap_sandbox, gone_soon, marker, processes_with


async def run(ctx: ToolContext, command: str, timeout: float | None = None) -> str:
    try:
        return await ExecuteCommand().run(ExecuteCommandArgs(command=command, timeout=timeout), ctx)
    except SandboxBlocked as blocked:
        return "BLOCKED " + blocked.result()
    except ToolFailure as failure:
        return f"FAILED {failure}"


async def test_a_write_inside_the_workspace_works(ctx: ToolContext, workspace: Path) -> None:
    output = await run(ctx, "mkdir -p src && echo hello > src/a.txt && cat src/a.txt")
    assert output.endswith("exit code 0") and "hello" in output
    assert (workspace / "src" / "a.txt").read_text() == "hello\n"


async def test_writes_outside_the_workspace_fail_and_change_nothing(
    ctx: ToolContext, workspace: Path, fake_home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"  # in the host's /tmp
    outside.write_text("before\n")
    output = await run(ctx, f"echo after > {outside}; touch ~/new.txt; echo x >> ~/notes.txt; rm -f ~/notes.txt")
    assert output.startswith("BLOCKED") and "Read-only file system" in output, output
    assert "[sandbox] a write was refused" in output and output.endswith("exit code 1")
    assert outside.read_text() == "before\n"
    assert not (fake_home / "new.txt").exists() and (fake_home / "notes.txt").read_text() == "mine\n"


async def test_tmp_is_private(ctx: ToolContext, tmp_path: Path) -> None:
    name = f"paicli-private-{marker()}"
    output = await run(ctx, f"echo x > /tmp/{name} && cat /tmp/{name} && ls /tmp")
    assert output.endswith("exit code 0"), output
    assert not Path("/tmp", name).exists()
    assert tmp_path.name not in output.split("exit code")[0].split()  # the host's /tmp is not listed


async def test_secrets_are_hidden(ctx: ToolContext, fake_home: Path) -> None:
    output = await run(ctx, "cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat ~/.netrc; ls -A ~/.ssh; echo done")
    assert "FAKE KEY" not in output and "aws_secret" not in output and "password" not in output
    assert "No such file" in output and output.endswith("exit code 0")
    assert (fake_home / ".ssh" / "id_rsa").exists()  # hidden, not removed


async def test_sandbox_hide_hides_more_and_sandbox_writable_opens_a_folder(workspace: Path, fake_home: Path) -> None:
    (fake_home / ".config" / "op").mkdir(parents=True)
    (fake_home / ".config" / "op" / "token").write_text("op-secret\n")
    (fake_home / ".m2").mkdir()
    sandbox = bwrap_sandbox(workspace, fake_home, hide=("~/.config/op",), writable=("~/.m2",))
    ctx = ToolContext(workspace=workspace, sandbox=sandbox)
    output = await run(ctx, "cat ~/.config/op/token; echo built > ~/.m2/artifact; echo x > ~/.cache/pip-like")
    assert "op-secret" not in output and output.endswith("exit code 0"), output
    assert (fake_home / ".m2" / "artifact").read_text() == "built\n"
    assert (fake_home / ".cache" / "pip-like").exists()  # ~/.cache is writable by default


async def test_git_internals_and_paicli_config_cannot_be_written(ctx: ToolContext, workspace: Path) -> None:
    git_init(workspace)
    (workspace / ".paicli").mkdir()
    config = (workspace / ".git" / "config").read_text()
    output = await run(
        ctx,
        "echo '[core] fsmonitor = evil' >> .git/config; echo evil > .git/hooks/pre-commit; "
        "echo 'approval = \"yolo\"' > .paicli/config.toml; echo ok > app.py",
    )
    assert output.count("Read-only file system") == 3, output
    assert (workspace / ".git" / "config").read_text() == config
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".paicli" / "config.toml").exists()
    assert (workspace / "app.py").read_text() == "ok\n"


async def test_git_commit_fails_plainly_in_the_sandbox(ctx: ToolContext, workspace: Path) -> None:
    git_init(workspace)
    (workspace / "a.txt").write_text("a\n")
    output = await run(ctx, "git add a.txt")
    assert output.startswith("BLOCKED") and "only the workspace (but not its .git/" in output, output


def _listening() -> tuple[socket.socket, list[bytes]]:
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        try:
            connection, _ = server.accept()
            with connection:
                received.append(connection.recv(100))
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    return server, received


async def test_no_network_by_default_and_network_when_asked(workspace: Path, fake_home: Path) -> None:
    server, received = _listening()
    port = server.getsockname()[1]
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && echo sent"
    try:
        closed = ToolContext(workspace=workspace, sandbox=bwrap_sandbox(workspace, fake_home))
        output = await run(closed, command)
        assert output.startswith("BLOCKED") and "the sandbox has no network" in output, output
        assert received == []
        opened = ToolContext(workspace=workspace, sandbox=bwrap_sandbox(workspace, fake_home, network=True))
        output = await run(opened, command)
        assert "sent" in output and output.endswith("exit code 0"), output
        for _ in range(100):
            if received:
                break
            await asyncio.sleep(0.05)
        assert received == [b"hello\n"]
    finally:
        server.close()


async def test_the_environment_loses_agent_sockets(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/0/agent.sock")
    output = await run(ctx, 'echo "sock=${SSH_AUTH_SOCK:-none} tmp=${TMPDIR:-/tmp}"; ls /run | wc -l')
    assert "sock=none tmp=/tmp" in output and "\n0\n" in output, output


async def test_only_a_minimal_dev_and_its_own_proc(ctx: ToolContext) -> None:
    output = await run(ctx, "find /dev -type b | wc -l; ls /proc | grep -c '^[0-9]'; test -e /proc/1/environ")
    counts = output.split("exit code")[0].split()
    assert counts[0] == "0"  # no disk is there to write to
    assert int(counts[1]) < 10  # its own processes only, not the host's
    assert str(os.getpid()) not in output


async def test_a_setsid_child_is_gone_when_the_command_returns(ctx: ToolContext) -> None:
    duration = marker()
    output = await run(ctx, f"setsid sleep {duration} > /dev/null 2>&1 & sleep 0.2; echo started")
    assert "started" in output
    assert processes_with(duration) == []


async def test_a_timeout_kills_the_whole_tree(ctx: ToolContext) -> None:
    first, second = marker(), marker()
    output = await run(ctx, f"(setsid sleep {first} &); nohup sleep {second} > /dev/null 2>&1 & sleep 60", timeout=1)
    assert output.startswith("FAILED timed out after 1 s"), output
    assert gone_soon(first) and gone_soon(second)


async def test_cancelling_kills_the_whole_tree(ctx: ToolContext) -> None:
    duration = marker()
    task = asyncio.ensure_future(run(ctx, f"setsid sleep {duration} & sleep 60"))
    for _ in range(100):
        if processes_with(duration):
            break
        await asyncio.sleep(0.05)
    assert processes_with(duration), "the command did not start"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(40):
        if not processes_with(duration):
            break
        await asyncio.sleep(0.05)
    assert processes_with(duration) == []


async def test_a_bounded_write_to_dev_shm_and_tmp_is_fine(ctx: ToolContext) -> None:
    output = await run(ctx, "head -c 1M /dev/zero > /dev/shm/x && head -c 1M /dev/zero > /tmp/x && echo ok")
    assert "ok" in output and output.endswith("exit code 0"), output


def test_the_sandbox_says_what_it_does(sandbox: BwrapSandbox) -> None:
    assert "no network" in sandbox.describe() and "secrets hidden" in sandbox.describe()


async def test_a_workspace_folder_on_path_cannot_get_a_program_planted(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An activated in-repo `.venv/bin`: a `git` written there would run outside the sandbox, by paicli
    itself (git_env reads git's configuration) or by you. Read-only, like for the file tools."""
    (workspace / ".venv" / "bin").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{workspace / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    output = await run(ctx, "printf '#!/bin/sh\\necho pwned\\n' > .venv/bin/git; echo ok > .venv/notes")
    assert "Read-only file system" in output, output
    assert not (workspace / ".venv" / "bin" / "git").exists()
    assert (workspace / ".venv" / "notes").exists()  # the rest of the workspace stays writable


async def test_a_command_the_user_types_runs_as_the_user(ctx: ToolContext, fake_home: Path) -> None:
    """`!command` in the REPL: the user's own command, outside the sandbox, even with one on the context."""
    from paicli.ui.commands.shell_escape import run_shell

    shown: list[str] = []
    done = await run_shell("touch ~/mine.txt && echo made", ctx, shown.append)
    assert done.status == "exit code 0" and shown == ["made"]
    assert (fake_home / "mine.txt").exists()


async def test_a_virtual_environment_under_tmp_on_path_works_whole_and_read_only(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout (and its venv) under /tmp, its `bin` on PATH: the private /tmp kept the `bin` and hid
    its `lib`, so `python -m mypy` found no mypy. The venv is kept whole, read-only."""
    venv = tmp_path / "checkout" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib" / "site-packages" / "tool.py").write_text("MARK = 1\n")
    (tmp_path / "checkout" / "secret-notes.txt").write_text("not the venv's\n")
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    output = await run(ctx, f"cat {venv}/lib/site-packages/tool.py; cat {tmp_path}/checkout/secret-notes.txt")
    assert "MARK = 1" in output and "not the venv's" not in output, output
    output = await run(ctx, f"echo x > {venv}/lib/site-packages/planted.py")
    assert "Read-only file system" in output and not (venv / "lib" / "site-packages" / "planted.py").exists()
