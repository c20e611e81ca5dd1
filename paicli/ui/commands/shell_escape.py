"""`!command` in the REPL: the user runs a command in the workspace without the model.

The command goes through the same runner as the `execute_command` tool (its own process group, the
hard denylist, credentials kept out of its environment), its output is shown line by line as it comes,
and command and output join the conversation as a user message (capped and masked like tool output),
so the next message can refer to it. Cancelling the task that runs it (ESC, Ctrl-C) kills the group.
It runs as the user, outside the sandbox: the user typed it.
"""

from __future__ import annotations

import asyncio
import codecs
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from paicli.app.driver import CancelWatch, until_done
from paicli.common.sanitize import one_line, terminal_safe
from paicli.llm.types import Message
from paicli.tools.base import ToolContext
from paicli.tools.builtin.execute_command import describe_exit, run_in_group
from paicli.tools.denylist import dangerous_reason
from paicli.tools.output import HeadTailBuffer, mask_secrets

_STATUS_ROOM = 120
# The user waits for a command they started themselves: no 60 s default, but never for ever.
SHELL_TIMEOUT = 3600.0


def shell_command(text: str) -> str | None:
    """The command of a `!command` line; None when the line is not one (an empty `!` is not)."""
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    return stripped[1:].strip() or None


class _ShownBuffer(HeadTailBuffer):
    """A HeadTailBuffer that also passes each complete line, masked, to `show` as it arrives."""

    def __init__(self, limit: int, secrets: list[str], show: Callable[[str], None]) -> None:
        super().__init__(head_bytes=2 * limit, tail_bytes=2 * limit)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._secrets = secrets
        self._show = show

    def feed(self, data: bytes) -> None:
        super().feed(data)
        self._pending += self._decoder.decode(data)
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._show(terminal_safe(mask_secrets(line.removesuffix("\r"), self._secrets)))

    def finish(self) -> None:
        rest = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        if rest:
            self._show(terminal_safe(mask_secrets(rest, self._secrets)))


@dataclass
class ShellRun:
    """What a `!command` produced: the capped, masked output and how it ended."""

    command: str
    output: str
    status: str  # "exit code 0", "stopped by the user", ...

    def message(self) -> Message:
        """The user message the conversation gets, so the model knows what the user ran and saw."""
        return {
            "role": "user",
            "content": (
                f"I ran a command in the workspace myself: `{self.command}`\n"
                f"Its output (stdout and stderr):\n```\n{self.output}\n```\n{self.status}"
            ),
        }


async def shell_escape(
    command: str, ctx: ToolContext, say: Callable[[str, str], None], watch: CancelWatch
) -> Message | None:
    """`!command` in the REPL: refused with one line by the hard denylist, else run as the user under
    `watch` (ESC stops it), its lines and its end shown; the message for the conversation, or None."""
    if reason := dangerous_reason(command, workspace=ctx.workspace):
        say(f"refused: {one_line(reason, limit=1000)}", "red")
        return None
    job = await until_done(run_shell(command, ctx, lambda line: say(line, "")), watch)
    ran = job.result()
    say(ran.status, "dim")
    return ran.message()


async def run_shell(command: str, ctx: ToolContext, show: Callable[[str], None]) -> ShellRun:
    """Runs `command` (already checked by `refusal`), showing its lines; cancellation kills it and is
    not raised: the result then says it was stopped, with the output so far."""
    limit = max(ctx.output_limit - _STATUS_ROOM, 200)
    buffer = _ShownBuffer(limit, ctx.secrets, show)
    as_the_user = dataclasses.replace(ctx, sandbox=None)  # the user typed it: no sandbox
    job = asyncio.ensure_future(run_in_group(command, as_the_user, buffer, SHELL_TIMEOUT))
    status: str
    try:
        code, timed_out = await job
        status = f"timed out after {SHELL_TIMEOUT:g} s" if timed_out else describe_exit(code)
    except asyncio.CancelledError:
        if not job.done():
            job.cancel()
        status = "stopped by the user"
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
    buffer.finish()
    output = buffer.render(limit).removesuffix("\n") if buffer.total else "(no output)"
    return ShellRun(command, mask_secrets(output, ctx.secrets), status)
