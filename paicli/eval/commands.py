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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from paicli.sandbox import Containment, SandboxChoice, choose_sandbox
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
    """`bash -c command` in `work`, its output (stdout and stderr together) and exit code."""
    argv: Sequence[str] = ["bash", "-c", command]
    environment = without_keys(env)
    choice = containing.choice(work, network=network)
    if choice is not None and choice.sandbox is not None:
        argv, environment = choice.sandbox.command(argv, environment, Containment(Path(os.path.realpath(work))))
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=work,
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
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
    text = output.decode("utf-8", "replace")
    if exit_code is None:
        text += f"\n[paicli eval: stopped after {timeout:g} s]"
    return Finished(exit_code, text, time.monotonic() - started)
