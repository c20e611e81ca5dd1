"""The suite's own commands of a run: the setup (before the agent, with the network) and the hidden check
(after it, without), each `bash -c` in the run's folder, contained by the same bubblewrap sandbox the
agent's commands use (paicli/sandbox) unless `eval` runs `--unsandboxed`. Neither gets the API key or
any other variable whose name looks like a credential (`*KEY*`, `*TOKEN*`, ...), as the agent's commands
do not."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from paicli.sandbox import Containment, SandboxChoice, choose_sandbox
from paicli.sandbox.launch import Launch, retried, start
from paicli.secret_handoff import HANDOFF_VARIABLE, is_secret_name

TAIL_LINES = 40
OUTPUT_LIMIT = 1 << 20  # bytes of a command's output kept (the end)


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None: it ran out of time
    output: str
    seconds: float

    def tail(self, lines: int = TAIL_LINES) -> str:
        return "\n".join(self.output.rstrip("\n").splitlines()[-lines:])


@dataclass(frozen=True)
class Containing:
    """How the suite's commands are contained: bubblewrap with these hidden paths, or not at all."""

    sandboxed: bool
    home: Path
    hide: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()

    def choice(self, work: Path, *, network: bool) -> SandboxChoice | None:
        if not self.sandboxed:
            return None
        return choose_sandbox(
            "bwrap", workspace=work, home=self.home, network=network, writable=self.writable, hide=self.hide
        )


def without_keys(env: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if not is_secret_name(name) and name != HANDOFF_VARIABLE}


async def run_command(
    command: str, work: Path, env: Mapping[str, str], containing: Containing, *, network: bool, timeout: float
) -> Finished:
    """`bash -c command` in `work`, its output (stdout and stderr together) and exit code; started once more
    when bubblewrap failed to set it up (it never ran: paicli/sandbox/launch.py)."""
    choice = containing.choice(work, network=network)
    sandbox = choice.sandbox if choice is not None else None
    containment = Containment(Path(os.path.realpath(work)))
    started = time.monotonic()
    exit_code, text = await retried(
        lambda: start(["bash", "-c", command], without_keys(env), sandbox, containment),
        lambda launch: _run_once(launch, work, timeout),
        lambda finished: finished[0],
    )
    if exit_code is None:
        text += f"\n[paicli eval: stopped after {timeout:g} s]"
    return Finished(exit_code, text, time.monotonic() - started)


async def _run_once(launch: Launch, work: Path, timeout: float) -> tuple[int | None, str]:
    """The exit code (None: it ran out of time) and output of one start."""
    process = await asyncio.create_subprocess_exec(
        *launch.argv,
        cwd=work,
        env=launch.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        pass_fds=launch.pass_fds,
    )
    output = bytearray()

    async def read() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(1 << 16):
            output.extend(chunk)
            del output[:-OUTPUT_LIMIT]

    reader = asyncio.create_task(read())
    exit_code: int | None
    try:
        exit_code = await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        exit_code = None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await asyncio.shield(process.wait())
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(reader, 5)
    return exit_code, output.decode("utf-8", "replace")
