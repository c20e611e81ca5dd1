"""Commands that would wait for a human or a terminal must end on their own, and nothing may outlive them.

Covered in tests/tools/builtin/test_execute_command.py and not repeated here: the timeout kills grandchildren
(test_timeout_kills_the_whole_group_including_grandchildren), `sleep 999 &` does not outlive the command
(test_background_process_does_not_outlive_the_command), `cat` waiting on stdin (test_stdin_is_empty_so_
cat_does_not_hang), 50 MB of output is capped (test_huge_output_is_capped; the buffer's bound is in
tests/tools/test_output.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin.execute_command import ExecuteCommand, ExecuteCommandArgs
from tests.sandboxing import bwrap_sandbox, marker, processes_with

LIMIT = 20.0  # seconds: far above what any of these needs, far below a hang (the timeout is 60 s)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, command_timeout=60)


async def run(ctx: ToolContext, command: str) -> tuple[str, float]:
    started = time.monotonic()
    try:
        output = await asyncio.wait_for(ExecuteCommand().run(ExecuteCommandArgs(command=command), ctx), LIMIT + 10)
    except ToolFailure as failure:
        output = f"failed: {failure}"
    return output, time.monotonic() - started


def git_repo(path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=path, check=True, env=env)
    (path / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_git_commit_without_a_message_does_not_wait_for_an_editor(ctx: ToolContext) -> None:
    git_repo(ctx.workspace)
    output, took = await run(ctx, "git commit")
    assert took < LIMIT
    assert "empty commit message" in output.lower() or "aborting" in output.lower(), output
    assert output.endswith("exit code 1")


@pytest.mark.parametrize(
    "command",
    [
        "python3",  # a REPL reading stdin
        "python3 -i -c 'x = 1'",
        "read -r line; echo got:$line",
        "bash -i -c 'echo interactive'",
        "less /etc/hostname",
        "ssh-keygen -t ed25519 -f key -q",  # asks for a passphrase
        "sudo true",  # refused before it runs
    ],
)
async def test_interactive_programs_get_end_of_file_and_return(ctx: ToolContext, command: str) -> None:
    output, took = await run(ctx, command)
    assert took < LIMIT, (command, output)


@pytest.mark.skipif(shutil.which("vi") is None, reason="vi is not installed")
async def test_an_editor_without_a_terminal_returns_on_its_own(ctx: ToolContext) -> None:
    try:
        output = await ExecuteCommand().run(ExecuteCommandArgs(command="vi notes.txt", timeout=2), ctx)
    except ToolFailure as failure:
        pytest.fail(str(failure).splitlines()[0])  # "timed out after 2 s"
    assert "needs a terminal" in output and "edit_file" in output and "exit code 126" in output
    # the editors' own batch modes still reach the real program
    batch = await ExecuteCommand().run(
        ExecuteCommandArgs(command="vi -es -c 'normal ihello' -c wq notes.txt", timeout=10), ctx
    )
    assert "exit code 0" in batch and (ctx.workspace / "notes.txt").read_text().strip() == "hello"


OUTLIVES = (
    "without the sandbox, a process that starts its own session (setsid) leaves the process group that "
    "execute_command kills; it outlives the command"
)


@pytest.mark.xfail(strict=True, reason=OUTLIVES)
async def test_a_process_in_its_own_session_does_not_outlive_the_command(ctx: ToolContext) -> None:
    pid_file = ctx.workspace / "escaped.pid"
    try:
        await run(ctx, "setsid sleep 60 > /dev/null 2>&1 & echo $! > escaped.pid; sleep 0.3")
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline and _alive(pid):
            await asyncio.sleep(0.05)
        assert not _alive(pid)
    finally:
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


async def test_in_the_sandbox_a_process_in_its_own_session_does_not_outlive_the_command(
    ctx: ToolContext, tmp_path: Path
) -> None:
    """Inside, `$!` is not a host pid: the child is found by a unique argument instead."""
    sandboxed = dataclasses.replace(ctx, sandbox=bwrap_sandbox(ctx.workspace, tmp_path / "home"))
    duration = marker()
    output, took = await run(sandboxed, f"setsid sleep {duration} > /dev/null 2>&1 & echo $! > escaped.pid; sleep 0.3")
    assert output.endswith("exit code 0") and took < LIMIT, output
    assert processes_with(duration) == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
