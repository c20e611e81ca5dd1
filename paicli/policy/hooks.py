"""Hooks: the project's own commands run around tool calls and at the end of turns and plans (issue 35).

Each hook (`[[hooks.EVENT]]` in a config file, paicli/policy/hook_config.py) is a `bash -c` command line run
in the workspace, in the sandbox unless it says `sandbox = false`, in its own process group, with the
credentials removed from its environment (as execute_command's), a time limit, and one JSON object on its
stdin (docs/contract.md#hooks):

    {"event": "before_tool", "tool": "write_file", "arguments": {...}, "task_id": null, "workspace": "/src/app"}

It answers by its exit code and, optionally, one JSON object on stdout:
- exit 0: `{"decision": "allow" | "ask" | "refuse", "reason": "...", "message": "...", "to_model": true}`,
  every key optional; stdout that is not a JSON object is its message.
- exit 2: the call is refused (before_tool); the reason is the JSON `reason`, else stderr, else stdout.
- any other exit, a time-out, a hook that cannot start: a warning notice, and the turn goes on as if the
  hook had not been there (a broken hook never breaks a turn).

What a hook says (its message) is shown as a notice; after a tool call, with `to_model`, it is also added to
the result the model sees. A decision counts only before a tool call: the approval policy
(paicli/policy/approval.py) refuses the call with the reason the model sees, asks the user in every mode
(nobody to ask: refused), or lets it run as an allow rule would. Every run is audited
(`hook:EVENT` lines in ~/.paicli/audit/).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from paicli.common.events import Notice
from paicli.policy.audit import AuditLog
from paicli.policy.hook_config import HookConfig, HookEvent, HooksConfig
from paicli.sandbox import Containment
from paicli.sandbox.launch import Launch, retried, start
from paicli.tools.base import Tool, ToolContext, ToolOutcome
from paicli.tools.builtin.execute_command import child_environment

OUTPUT_LIMIT = 64 * 1024  # bytes kept of a hook's stdout and of its stderr each
SHOWN_LIMIT = 2000  # characters of a hook's message in a notice or a tool result
DRAIN_GRACE = 2.0  # seconds to wait for the pipes once the hook has exited and its group is killed
REFUSE_CODE = 2
Decision = Literal["allow", "ask", "refuse"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "refuse")


@dataclass(frozen=True)
class HookAnswer:
    decision: Decision | None = None
    reason: str = ""
    message: str = ""
    to_model: bool = False


@dataclass(frozen=True)
class Finished:
    code: int | None  # None: timed out
    stdout: str
    stderr: str


class Hooks:
    def __init__(self, config: HooksConfig, *, audit: AuditLog | None = None) -> None:
        self.config = config
        self.audit = audit

    def __bool__(self) -> bool:
        return bool(self.config)

    async def before_tool(self, tool: str, arguments: Mapping[str, Any], ctx: ToolContext) -> HookAnswer | None:
        """What the before_tool hooks for `tool` say: the first refusal, else an ask, else an allow; None
        when none has a say. Run in order; a refusal stops the rest."""
        found: HookAnswer | None = None
        for hook in self._for_tool("before_tool", tool):
            answer = await self._run("before_tool", hook, ctx, tool=tool, arguments=dict(arguments))
            if answer is None or answer.decision is None:
                continue
            if answer.decision == "refuse":
                return answer
            if found is None or (answer.decision == "ask" and found.decision == "allow"):
                found = answer
        return found

    async def after_tool(
        self, tool: str, arguments: Mapping[str, Any], ctx: ToolContext, *, ok: bool, output: str
    ) -> str:
        """What the after_tool hooks for `tool` add to its result for the model ("" for nothing)."""
        added = []
        for hook in self._for_tool("after_tool", tool):
            result = {"ok": ok, "output": output}
            answer = await self._run("after_tool", hook, ctx, tool=tool, arguments=dict(arguments), result=result)
            if answer is not None and answer.message and (hook.to_model or answer.to_model):
                added.append(f"[hook after_tool `{_short(hook.command)}` says: {answer.message}]")
        return "\n".join(added)

    async def after_call(self, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext, outcome: ToolOutcome) -> str:
        """The tool box's `after_call` (paicli/tools/toolbox.py): the after_tool hooks, told the tool's own
        output (without the marker paicli adds for the model)."""
        output = outcome.output
        if output.startswith("[untrusted ") and "\n" in output:
            output = output.split("\n", 1)[1]
        return await self.after_tool(tool.name, arguments, ctx, ok=outcome.ok, output=output)

    async def notify(self, event: HookEvent, ctx: ToolContext, **facts: Any) -> None:
        """Runs the hooks of a point that only listens (turn_end, plan_end, plan_approved)."""
        for hook in self.config.of(event):
            await self._run(event, hook, ctx, **facts)

    def _for_tool(self, event: HookEvent, tool: str) -> list[HookConfig]:
        return [hook for hook in self.config.of(event) if any(fnmatch.fnmatchcase(tool, p) for p in hook.tools)]

    async def _run(self, event: HookEvent, hook: HookConfig, ctx: ToolContext, **facts: Any) -> HookAnswer | None:
        """One hook run: its answer, or None (after a warning) when it failed, timed out or could not start."""
        payload = {"event": event, "tool": None, "arguments": None, "task_id": ctx.task_id}
        payload |= {"workspace": str(ctx.workspace), **facts}
        try:
            finished = await run_hook(hook, event, payload, ctx)
        except OSError as error:
            self._failed(event, hook, ctx, f"could not start: {error.strerror or error}")
            return None
        if finished.code is None:
            self._failed(event, hook, ctx, f"timed out after {hook.timeout:g} s and was killed", "hook_timed_out")
            return None
        if finished.code not in (0, REFUSE_CODE):
            detail = (finished.stderr or finished.stdout).strip()
            self._failed(event, hook, ctx, f"failed (exit code {finished.code})" + (f": {detail}" if detail else ""))
            return None
        answer = read_answer(finished)
        if answer.decision is not None and event != "before_tool":
            answer = HookAnswer(None, answer.reason, answer.message or answer.reason, answer.to_model)
        decision = f"hook_{answer.decision}" if answer.decision else "hook_ran"
        self._audit(event, hook, ctx, decision, answer.reason or answer.message, facts.get("tool"))
        if answer.message:
            _notice(ctx, "info", f"hook {event} `{_short(hook.command)}`: {_cut(answer.message)}")
        return answer

    def _failed(
        self, event: HookEvent, hook: HookConfig, ctx: ToolContext, why: str, decision: str = "hook_failed"
    ) -> None:
        self._audit(event, hook, ctx, decision, why, None)
        _notice(ctx, "warning", f"hook {event} `{_short(hook.command)}` {_cut(why)}; carrying on without it")

    def _audit(
        self, event: HookEvent, hook: HookConfig, ctx: ToolContext, decision: str, reason: str, tool: Any
    ) -> None:
        if self.audit is not None:
            arguments = {"command": hook.command, "tool": tool} if tool else {"command": hook.command}
            self.audit.record(
                tool=f"hook:{event}", arguments=arguments, decision=decision, reason=reason, task_id=ctx.task_id
            )


def read_answer(finished: Finished) -> HookAnswer:
    """The answer in a hook's exit code and stdout (a JSON object, or text: its message)."""
    text = finished.stdout.strip()
    data: Any = None
    if text.startswith("{"):
        with contextlib.suppress(ValueError, RecursionError):
            data = json.loads(text)
    if not isinstance(data, dict):
        data = {"message": text}
    decision = data.get("decision")
    reason, message = _string(data.get("reason")), _string(data.get("message"))
    if finished.code == REFUSE_CODE:
        decision = "refuse"
        reason = reason or finished.stderr.strip() or message or "a hook refused it"
    elif decision not in DECISIONS:
        decision = None
    return HookAnswer(cast(Decision | None, decision), _cut(reason), _cut(message), data.get("to_model") is True)


async def run_hook(hook: HookConfig, event: HookEvent, payload: Mapping[str, Any], ctx: ToolContext) -> Finished:
    """Runs one hook with `payload` on its stdin; its code is None when it was killed at its time limit.
    Cancelled, it is killed (its whole process group) before the cancellation goes on. Started once more
    when bubblewrap failed to set it up (it never ran: paicli/sandbox/launch.py)."""
    containment = Containment(ctx.workspace, ctx.scope.writable if ctx.scope is not None else None)
    try:
        return await retried(
            lambda: _command_line(hook, event, payload, ctx, containment),
            lambda launch: _run_once(launch, hook, payload, ctx),
            lambda finished: finished.code,
        )
    finally:
        containment.release()


async def _run_once(launch: Launch, hook: HookConfig, payload: Mapping[str, Any], ctx: ToolContext) -> Finished:
    process = await asyncio.create_subprocess_exec(
        *launch.argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ctx.workspace,
        env=launch.env,
        start_new_session=True,
        pass_fds=launch.pass_fds,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    reads = [asyncio.ensure_future(_read(process.stdout)), asyncio.ensure_future(_read(process.stderr))]
    feed = asyncio.ensure_future(_feed(process.stdin, json.dumps(payload, ensure_ascii=False).encode() + b"\n"))
    timed_out = False
    try:
        await asyncio.wait_for(process.wait(), hook.timeout)
    except TimeoutError:
        timed_out = True
    except BaseException:  # cancelled (ESC): the whole group goes at once
        _kill_group(process.pid)
        for task in (feed, *reads):
            task.cancel()
        raise
    _kill_group(process.pid)  # at the limit, and what it left running in the background
    feed.cancel()
    await asyncio.wait(reads, timeout=DRAIN_GRACE)
    for read in reads:
        read.cancel()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), DRAIN_GRACE)
    out, err = (read.result() if read.done() and not read.cancelled() else b"" for read in reads)
    code = None if timed_out else process.returncode
    return Finished(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def _command_line(
    hook: HookConfig, event: HookEvent, payload: Mapping[str, Any], ctx: ToolContext, containment: Containment
) -> Launch:
    env = child_environment(ctx.workspace)
    env["PAICLI_HOOK_EVENT"] = event
    if isinstance(tool := payload.get("tool"), str):
        env["PAICLI_TOOL"] = tool
    arguments = payload.get("arguments")
    if isinstance(arguments, dict) and isinstance(path := arguments.get("path"), str):
        env["PAICLI_PATH"] = path
    return start(["bash", "-c", hook.command], env, ctx.sandbox if hook.sandbox else None, containment)


async def _read(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        kept += chunk[: max(0, OUTPUT_LIMIT - len(kept))]
    return bytes(kept)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(OSError):  # a hook that does not read its stdin is fine
        stdin.write(data)
        await stdin.drain()
        stdin.close()


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _notice(ctx: ToolContext, level: Literal["info", "warning"], message: str) -> None:
    if ctx.sink is not None:
        ctx.sink.emit(Notice(level=level, message=message))


def _string(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SHOWN_LIMIT else text[: SHOWN_LIMIT - 1] + "…"


def _short(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"
