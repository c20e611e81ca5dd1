"""execute_command: real bash subprocesses, process-group control, bounded output, clean environment."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext, ToolFailure
from paicli.tools.builtin import execute_command
from paicli.tools.builtin.execute_command import ExecuteCommand, ExecuteCommandArgs


async def run(ctx: ToolContext, command: str, timeout: float | None = None) -> str:
    return await ExecuteCommand().run(ExecuteCommandArgs(command=command, timeout=timeout), ctx)


async def run_error(ctx: ToolContext, command: str, timeout: float | None = None) -> str:
    with pytest.raises(ToolFailure) as caught:
        await run(ctx, command, timeout)
    return str(caught.value)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie is dead, only not yet reaped by its (re)parent


async def gone_within(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def wait_for_file(path: Path, seconds: float = 5.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    assert await run(ctx, "echo hello") == "hello\nexit code 0"
    assert await run(ctx, "echo oops >&2; exit 3") == "oops\nexit code 3"
    assert await run(ctx, "true") == "(no output)\nexit code 0"


async def test_runs_in_the_workspace(workspace: Path, ctx: ToolContext) -> None:
    assert (await run(ctx, "pwd")).splitlines()[0] == os.path.realpath(workspace)


async def test_stdin_is_empty_so_cat_does_not_hang(ctx: ToolContext) -> None:
    assert await asyncio.wait_for(run(ctx, "cat; read line; echo done"), 10) == "done\nexit code 0"


async def test_api_keys_are_not_in_the_child_environment(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PAICLI_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD"):
        monkeypatch.setenv(name, f"value-of-{name}")
    monkeypatch.setenv("PAICLI_HARMLESS", "visible")
    out = await run(ctx, "env")
    assert "value-of-" not in out
    assert "PAICLI_HARMLESS=visible" in out
    for line in ("PAGER=cat", "GIT_PAGER=cat", "GIT_EDITOR=true", "EDITOR=true", "GIT_TERMINAL_PROMPT=0"):
        assert line in out.splitlines()


async def test_background_process_does_not_outlive_the_command(ctx: ToolContext) -> None:
    started = time.monotonic()
    out = await asyncio.wait_for(run(ctx, "sleep 999 & echo $!"), 15)
    assert time.monotonic() - started < 10
    pid = int(out.splitlines()[0])
    assert await gone_within(pid)


async def test_timeout_kills_the_whole_group_including_grandchildren(ctx: ToolContext) -> None:
    # The subshell forks, so the sleep is bash's grandchild.
    message = await run_error(ctx, "(sleep 999 & echo $!; wait); echo not reached", timeout=1)
    assert message.startswith("timed out after 1 s")
    pid = int(message.splitlines()[-1])
    assert await gone_within(pid)


async def test_timeout_defaults_to_the_context(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, command_timeout=1)
    assert (await run_error(ctx, "echo partial; sleep 30")).startswith("timed out after 1 s")


async def test_process_ignoring_sigterm_gets_sigkill(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_command, "TERM_GRACE", 0.5)
    message = await run_error(ctx, "trap '' TERM; sleep 999 & echo $!; wait", timeout=1)
    assert "timed out" in message
    assert await gone_within(int(message.splitlines()[-1]))


async def test_huge_output_is_capped(ctx: ToolContext) -> None:
    out = await asyncio.wait_for(run(ctx, "echo FIRST; yes | head -c 50000000; echo; echo LAST"), 30)
    assert len(out) <= ctx.output_limit
    assert out.startswith("FIRST\ny\n")
    assert out.endswith("LAST\nexit code 0")
    assert "bytes omitted" in out


async def test_invalid_utf8_is_replaced(ctx: ToolContext) -> None:
    assert await run(ctx, r"printf 'ok \xff\xfe end\n'") == "ok \ufffd\ufffd end\nexit code 0"


async def test_cancellation_kills_the_group_at_once(workspace: Path, ctx: ToolContext) -> None:
    task = asyncio.create_task(run(ctx, "sleep 998 & echo $! > bg.pid; sleep 999"))
    pid = int(await wait_for_file(workspace / "bg.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_within(pid)


async def test_a_process_that_leaves_the_group_cannot_hang_the_call(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute_command, "DRAIN_GRACE", 0.5)
    try:
        out = await asyncio.wait_for(run(ctx, "setsid sleep 30 & echo $! > escaped.pid; sleep 0.3; echo ok"), 15)
        assert out.startswith("ok")
    finally:
        kill_quietly(int(await wait_for_file(workspace / "escaped.pid")))


async def test_dangerous_commands_are_refused_before_anything_runs(workspace: Path, ctx: ToolContext) -> None:
    message = await run_error(ctx, "touch marker; rm -rf /")
    assert message.startswith("refused: ")
    assert not (workspace / "marker").exists()


async def test_killed_by_a_signal_is_reported(ctx: ToolContext) -> None:
    assert (await run(ctx, "kill -9 $$")).endswith("exit code 137 (killed by SIGKILL)")


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ExecuteCommandArgs(command="ls", timeout=0)
