"""execute_command: `bash -c COMMAND` in the workspace, in its own process group, with a timeout.

The process group is the unit of control: on timeout it gets SIGTERM and then SIGKILL, on
cancellation (ESC) SIGKILL at once, and after bash exits whatever it left running in the group is
killed, so `sleep 999 &` neither outlives the command nor keeps its output pipe open. Output (stdout
and stderr merged) is captured through a bounded head + tail buffer, so a command printing 50 MB
costs a few hundred KB of memory.

With a sandbox on the tool context (paicli/sandbox/), `bash` runs inside it: bubblewrap is the group
leader, and its PID namespace takes down everything the command started when it ends, `setsid`
children included. A command that fails because of the sandbox (a read-only path, no network) raises
SandboxBlocked, so the tool box can ask whether to run it once outside. One that bubblewrap failed to
set up (it never ran: a socket's folder removed meanwhile) is started once more (paicli/sandbox/launch.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.sandbox import Containment, blocked_by_sandbox, write_refused
from paicli.sandbox.gitdirs import GitPaths
from paicli.sandbox.launch import Launch, retried, start
from paicli.tools.base import Effect, SandboxBlocked, Tool, ToolContext, ToolFailure
from paicli.tools.denylist import dangerous_reason
from paicli.tools.git_added import before_command, settle, settle_now
from paicli.tools.git_env import git_safety_environment, read_git_config
from paicli.tools.output import HeadTailBuffer
from paicli.tools.shims import with_shims

MAX_TIMEOUT = 600.0
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL on timeout
DRAIN_GRACE = 2.0  # seconds to wait for the pipe to close once the group is dead
_STATUS_ROOM = 120  # characters kept free for the exit-code line
_SENSITIVE_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
_QUIET_TOOLS = {"PAGER": "cat", "EDITOR": "true"}


class ExecuteCommandArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The bash command line to run in the workspace folder.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description=f"Seconds before the command is killed. Default 60, at most {MAX_TIMEOUT:g}.",
    )


class ExecuteCommand(Tool):
    name = "execute_command"
    description = (
        "Run a command with `bash -c` in the workspace folder and return its output (stdout and stderr "
        "merged) and exit code. No terminal and no stdin: interactive programs get end-of-file, pagers "
        "and editors are disabled. Background processes are killed when the command ends. Long output "
        "is cut in the middle."
    )
    Args = ExecuteCommandArgs
    effect = Effect.EXECUTE
    command_argument = summary_argument = "command"
    untrusted_output = True

    async def run(self, args: ExecuteCommandArgs, ctx: ToolContext) -> str:
        if reason := dangerous_reason(args.command, workspace=ctx.workspace):
            raise ToolFailure(f"refused: {reason}")
        timeout = min(args.timeout or ctx.command_timeout, MAX_TIMEOUT)
        limit = max(ctx.output_limit - _STATUS_ROOM, 200)
        # Bytes kept on each side: enough for `limit` characters even if every character were 4 bytes.
        buffer = HeadTailBuffer(head_bytes=2 * limit, tail_bytes=2 * limit)
        before = await before_command(ctx)
        try:
            found = before.found if before is not None else None  # the sandbox need not walk again
            code, timed_out = await run_in_group(args.command, ctx, buffer, timeout, found)
        except asyncio.CancelledError:
            settle_now(before, ctx)
            if ctx.on_cancelled is not None and buffer.total:
                ctx.on_cancelled(buffer.render(limit).removesuffix("\n"))
            raise
        output = buffer.render(limit).removesuffix("\n") if buffer.total else "(no output)"
        if note := await settle(before, ctx):
            output = f"{output}\n{note}"
        if timed_out:
            raise ToolFailure(f"timed out after {timeout:g} s (the command was killed); output so far:\n{output}")
        if ctx.sandbox is not None:
            writable = ctx.scope.writable if ctx.scope is not None else None
            if code != 0 and (reason := blocked_by_sandbox(output, network=ctx.sandbox.network, writable=writable)):
                raise SandboxBlocked(output, describe_exit(code), reason)
            if code == 0 and (reason := write_refused(output, writable)):  # perl -i skips the file, exits 0
                output += f"\nnote: the command exited 0, but its output reports a read-only file system: {reason}"
        return f"{output}\n{describe_exit(code)}"

    def failure(self, output: str) -> str | None:
        """A non-zero exit code, read from the last line this tool wrote (`exit code 1`), in words: "it
        exited with code 1", "it was killed by SIGKILL"."""
        match = _EXIT_LINE.search(output.rstrip())
        if match is None or match.group(1) == "0":
            return None
        if match.group(2):
            return f"it was killed by {match.group(2)}"
        return f"it exited with code {match.group(1)}"


_EXIT_LINE = re.compile(r"exit code (\d+)(?: \(killed by ([^)]*)\))?\Z")


def describe_exit(code: int | None) -> str:
    if code is None:
        return "exit code unknown (the process could not be reaped)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"exit code {128 - code} (killed by {name})"
    return f"exit code {code}"


def child_environment(workspace: Path) -> dict[str, str]:
    """os.environ without anything that looks like a credential, with pagers and editors disabled,
    full-screen editors replaced by stand-ins that fail at once (paicli/tools/shims.py), and git's
    program-running configuration neutralised (paicli/tools/git_env.py)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not any(part in name.upper() for part in _SENSITIVE_NAME_PARTS)
    }
    env.update(_QUIET_TOOLS)
    env["PATH"] = with_shims(env.get("PATH", os.defpath))
    env.update(git_safety_environment(env, read_git_config(workspace, env)))
    return env


class _Capture(asyncio.SubprocessProtocol):
    """Feeds the merged output into the buffer (and, decoded, to `on_output` for the display); tells when
    bash has exited and when the pipe closed."""

    def __init__(self, buffer: HeadTailBuffer, on_output: Callable[[str], None] | None = None) -> None:
        loop = asyncio.get_running_loop()
        self.buffer = buffer
        self.on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipe_closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.buffer.feed(bytes(data))
        if self.on_output is not None and (text := self._decoder.decode(bytes(data))):
            with contextlib.suppress(Exception):  # the display must never break the command
                self.on_output(text)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


def command_line(command: str, ctx: ToolContext, containment: Containment | None = None) -> Launch:
    """How to start `command`: `bash -c` as the user, or inside ctx's sandbox (a plan task's declared files
    the only writable part of the workspace). Blocking: runs `git config`."""
    argv, env = ["bash", "-c", command], child_environment(ctx.workspace)
    if containment is None:
        containment = Containment(ctx.workspace, ctx.scope.writable if ctx.scope is not None else None)
    return start(argv, env, ctx.sandbox, containment)


async def run_in_group(
    command: str, ctx: ToolContext, buffer: HeadTailBuffer, timeout: float, git_paths: GitPaths | None = None
) -> tuple[int | None, bool]:
    """Run `bash -c command` (contained by ctx's sandbox, if any) in a new process group; return
    (exit code, timed out). `git_paths`: the workspace's git-controlled paths as just found, if known."""
    writable = ctx.scope.writable if ctx.scope is not None else None
    containment = Containment(ctx.workspace, writable, git_paths=git_paths)
    try:
        return await _run_contained(command, ctx, buffer, timeout, containment)
    finally:  # the empty files made for declared files the command did not write go again
        containment.release()


async def _run_contained(
    command: str, ctx: ToolContext, buffer: HeadTailBuffer, timeout: float, containment: Containment
) -> tuple[int | None, bool]:
    """Run once more when bubblewrap failed to set the command up (it never ran: paicli/sandbox/launch.py)."""
    return await retried(
        lambda: command_line(command, ctx, containment),
        lambda launch: _run_once(launch, ctx, buffer, timeout),
        lambda result: None if result[1] else result[0],
    )


async def _run_once(
    launch: Launch, ctx: ToolContext, buffer: HeadTailBuffer, timeout: float
) -> tuple[int | None, bool]:
    loop = asyncio.get_running_loop()
    buffer.clear()  # a start bwrap failed to set up leaves its complaint only on the display
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Capture(buffer, ctx.on_output),
            *launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ctx.workspace,
            env=launch.env,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    )
    try:
        transport, capture = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while bash was starting: asyncio would kill bash alone, and what it already started in
        # the background would live on. Wait until it exists, then kill its whole group.
        with contextlib.suppress(Exception):
            started, _ = await spawn
            _signal_group(started.get_pid(), signal.SIGKILL)
            started.close()
        raise
    group = transport.get_pid()  # the session leader's pid is the group id
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(capture.exited), timeout)
        except TimeoutError:
            timed_out = True
            _signal_group(group, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(capture.exited), TERM_GRACE)
        # Bash has exited (or is being killed): nothing of its group may outlive the command.
        _signal_group(group, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            # Only a process that left the group (setsid) can keep the pipe open now; don't wait for it.
            await asyncio.wait_for(asyncio.shield(capture.pipe_closed), DRAIN_GRACE)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(capture.exited), DRAIN_GRACE)
        return transport.get_returncode(), timed_out
    except BaseException:
        # Cancellation (ESC) or anything unexpected: kill at once, then let the exception travel.
        _signal_group(group, signal.SIGKILL)
        raise
    finally:
        transport.close()


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)
