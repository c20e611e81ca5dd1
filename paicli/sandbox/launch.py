"""Starting a command, contained or not, and starting it once more when bubblewrap failed to set it up.

bwrap makes the sandbox's mounts in a child, before it runs the command, from options built just before
(bwrap.py). A path those options name can go in between: a socket covered with /dev/null whose folder
another process removed. bwrap then fails in its setup (`bwrap: Can't mkdir parents for ...`, `Can't
create file at ...`: a `--*-try` bind forgives a missing source, never a missing mount point) and the
command never ran. Such a start is made once more with the options built afresh (the socket scan no
longer finds what went); options that come out the same are not tried again (the failure is not that
race), and a command that ran is never run again, whatever it printed and however it failed.

Which of the two happened is read from bwrap's `--json-status-fd`, never from the command's output: bwrap
writes a line `{ "exit-code": N }` there only when it executed the command (a close-on-exec pipe of its
own tells it so), after the command ended. The descriptor is a pipe that bwrap closes inside the sandbox
before the command starts, so the command cannot write to it; and anything there that is not bwrap's own
JSON counts as "it ran", as does a bwrap that was killed (a time-out, ESC) or exited 0. A write cannot
go astray either: a few hundred bytes never fill a pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from paicli.sandbox.containment import Containment, Sandbox

__all__ = ["Launch", "never_ran", "retried", "start"]

Result = TypeVar("Result")
Made = TypeVar("Made", bound="Launch | None")


class Launch:
    """How to start one command: its argv, environment and the descriptors the process must be given
    (`pass_fds`). Contained, it carries the pipe bwrap reports its status on: `close` it once the run is
    over (a `with` block does)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        built: list[str] | None = None,
        status: tuple[int, int] | None = None,
        rebuild: Callable[[], Launch] | None = None,
    ) -> None:
        self.argv = argv
        self.env = env
        self.built = built if built is not None else argv  # as the sandbox built it, without the status pipe
        self._status = status  # (read end, write end)
        self._rebuild = rebuild
        self.pass_fds: tuple[int, ...] = (status[1],) if status is not None else ()
        self.watched = status is not None  # bwrap reports whether it ran the command

    def __enter__(self) -> Launch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def setup_failed(self, returncode: int | None) -> bool:
        """Whether bwrap failed before it ran the command, for a process that ended with `returncode`
        (None: it was stopped, a time-out). Reads the status pipe (once: it is closed after)."""
        if self._status is None:
            return False
        status = _drain(self._status[0])
        self.close()
        return never_ran(returncode, status)

    def again(self) -> Launch | None:
        """The start with the options built afresh, when they differ from these; None otherwise, and for
        a start that is itself the second. Blocking (the sandbox scans again)."""
        if self._rebuild is None:
            return None
        fresh = self._rebuild()
        if fresh.built == self.built:
            fresh.close()
            return None
        return fresh

    def close(self) -> None:
        if self._status is not None:
            for fd in self._status:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._status = None


def start(argv: Sequence[str], env: Mapping[str, str], sandbox: Sandbox | None, containment: Containment) -> Launch:
    """How to start `argv`: as it is without a sandbox, else contained, with the pipe that tells whether
    the sandbox's setup failed. Blocking, as `Sandbox.command`."""
    return _start(list(argv), dict(env), sandbox, containment, first=True)


def _start(
    argv: list[str], env: dict[str, str], sandbox: Sandbox | None, containment: Containment, *, first: bool
) -> Launch:
    if sandbox is None:
        return Launch(argv, env)
    built, environment = sandbox.command(argv, env, containment)
    read, write = os.pipe()  # both ends close-on-exec: only the bwrap given `write` gets it
    os.set_blocking(read, False)
    watched = sandbox.with_status(built, write)
    if watched is None:  # a bwrap too old to tell: the failure stays as it is
        for fd in (read, write):
            os.close(fd)
        return Launch(built, environment)
    rebuild = (lambda: _start(argv, env, sandbox, containment, first=False)) if first else None
    return Launch(watched, environment, built, (read, write), rebuild)


def never_ran(returncode: int | None, status: bytes) -> bool:
    """Whether a bwrap that exited with `returncode` and wrote `status` on its --json-status-fd failed
    before it executed the command: it exited non-zero on its own (not killed) and wrote nothing but
    JSON objects without "exit-code" (nothing at all: it failed before it made the sandbox)."""
    if returncode is None or returncode <= 0:
        return False
    for line in status.splitlines():
        try:
            document = json.loads(line)
        except ValueError:
            return False
        if not isinstance(document, dict) or "exit-code" in document:
            return False
    return True


async def retried(
    build: Callable[[], Launch], run: Callable[[Launch], Awaitable[Result]], code: Callable[[Result], int | None]
) -> Result:
    """`run` on the launch `build` makes (blocking: in a thread), and once more on a fresh one when bwrap
    failed in its setup and the options built again differ; the result of the last run. `code`: the exit
    code in a result, None when the run was stopped (a time-out). Every launch is closed, cancelled or not."""
    launch = await _made(build)
    with launch:
        result = await run(launch)
        if not launch.setup_failed(code(result)):
            return result
        fresh = await _made(launch.again)
    if fresh is None:
        return result
    with fresh:
        return await run(fresh)


async def _made(make: Callable[[], Made]) -> Made:
    """What `make` makes, in a thread."""
    job = asyncio.ensure_future(asyncio.to_thread(make))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:  # the thread goes on: the launch it makes is closed once made
        job.add_done_callback(_close_made)
        raise


def _close_made(job: asyncio.Future[Made]) -> None:
    if not job.cancelled() and job.exception() is None and (made := job.result()) is not None:
        made.close()


def _drain(fd: int) -> bytes:
    """What is in the pipe now (the writer has exited; a left-over write end must not block)."""
    chunks: list[bytes] = []
    with contextlib.suppress(OSError):  # BlockingIOError: nothing more for now
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks)
