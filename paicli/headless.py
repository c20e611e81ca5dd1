"""`paicli run` and `paicli plan` without a TTY: JSON-lines event writer, progress on stderr, exit codes."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from paicli.config import Settings
from paicli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, ConfigError, PaicliError
from paicli.events import Event, EventSink, RunFinished
from paicli.plan.model import PlanStatus
from paicli.plan.session import approve_unasked
from paicli.plan.store import PlanStore, plan_from_file, prepare_resume
from paicli.runtime import Runtime, build_plan_session, build_runtime, secret_values
from paicli.sanitize import json_safe, terminal_safe
from paicli.tools.output import mask_secrets

QUIET_IN_JSON = {"text_delta"}


class JsonLinesSink:
    """One event per line on `stream`, secrets masked. Streamed text deltas are left out."""

    def __init__(self, stream: TextIO, secrets: list[str]) -> None:
        self.stream = stream
        self.secrets = secrets

    def emit(self, event: Event) -> None:
        if event.event in QUIET_IN_JSON:
            return
        self.stream.write(json_safe(mask_secrets(event.model_dump_json(), self.secrets)) + "\n")
        self.stream.flush()


class ProgressSink:
    """Plain one-line progress on stderr for humans watching a headless run."""

    def __init__(self, stream: TextIO, secrets: list[str]) -> None:
        self.stream = stream
        self.secrets = secrets

    def emit(self, event: Event) -> None:
        line = progress_line(event)
        if line:
            self.stream.write(mask_secrets(line, self.secrets) + "\n")
            self.stream.flush()


def progress_line(event: Event) -> str | None:
    """One plain line for a human, or None. Model and tool text goes through the sanitizer (one line), so
    nothing it contains can drive the terminal."""
    line = _progress_line(event)
    return None if line is None else " ".join(terminal_safe(line).split())


def _progress_line(event: Event) -> str | None:
    data = event.model_dump()
    kind = event.event
    prefix = f"[{data['task_id']}] " if data.get("task_id") else ""
    if kind == "tool_call":
        return f"{prefix}→ {data['name']} {str(data['arguments'])[:160]}"
    if kind == "tool_result" and not data["ok"]:
        return f"{prefix}✗ {data['name']}: {data['output'].splitlines()[0][:160] if data['output'] else ''}"
    if kind == "notice":
        return f"paicli: {data['message']}"
    if kind == "task_started":
        return f"▶ {data['task_id']} started"
    if kind == "task_finished":
        why = data.get("error") or ""
        return f"■ {data['task_id']} {data['status']}{': ' + why if why else ''}"
    if kind == "replan":
        return f"↻ replanning (round {data['round']}): {data['reason']}"
    if kind == "review":
        return f"★ review round {data['round']}: {data['score']}/10 — {data['reflection']}"
    return None


def make_sink(settings: Settings, json_mode: bool) -> EventSink:
    secrets = secret_values(settings)
    return JsonLinesSink(sys.stdout, secrets) if json_mode else ProgressSink(sys.stderr, secrets)


def run_async(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run `main` with SIGINT/SIGTERM cancelling it; a cancelled run exits 130."""

    async def guarded() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await main()
        except asyncio.CancelledError:
            return EXIT_CANCELLED
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    return asyncio.run(guarded())


def fail(message: str, code: int) -> int:
    print(f"paicli: {terminal_safe(message)}", file=sys.stderr)
    return code


async def with_runtime(settings: Settings, sink: EventSink, body: Callable[[Runtime], Awaitable[int]]) -> int:
    runtime = build_runtime(settings, sink)
    try:
        return await body(runtime)
    except ConfigError as err:
        return fail(str(err), EXIT_USAGE)
    except PaicliError as err:  # the model unreachable, a plan that never validated, ...
        return fail(str(err), EXIT_FAILED)
    finally:
        await runtime.aclose()


def run_command(settings: Settings, prompt: str, *, json_mode: bool) -> int:
    settings.require_key()
    sink = make_sink(settings, json_mode)

    async def body(runtime: Runtime) -> int:
        messages = [
            {"role": "system", "content": runtime.system_prompt(None)},
            {"role": "user", "content": prompt},
        ]
        result = await runtime.react(sink).run(messages)
        sink.emit(RunFinished(content=result.content, usage=result.usage))
        if not json_mode:
            print(terminal_safe(mask_secrets(result.content, runtime.secrets())))
        return EXIT_OK

    return run_async(lambda: with_runtime(settings, sink, body))


def plan_command(
    settings: Settings,
    goal: str | None,
    *,
    yes: bool,
    json_mode: bool,
    resume: str | None = None,
    from_file: str | None = None,
) -> int:
    if not goal and not resume and not from_file:
        raise ConfigError("paicli plan needs a GOAL (or --resume ID / --from FILE.json)")
    screen = sys.stderr if json_mode else sys.stdout  # where an interactive review would draw
    if not yes and not (sys.stdin.isatty() and screen.isatty()):
        raise ConfigError("paicli plan without a terminal needs --yes to approve the plan unasked")
    settings.require_key()
    given, plan_id = None, None
    if resume:
        record = PlanStore(settings.workspace).load(resume)
        given, plan_id = prepare_resume(record.plan), record.id
    elif from_file:
        given = plan_from_file(Path(from_file))

    if not yes:
        from paicli.ui.plan_runner import plan_in_terminal

        return plan_in_terminal(settings, goal, plan=given, plan_id=plan_id, json_mode=json_mode)

    sink = make_sink(settings, json_mode)

    async def body(runtime: Runtime) -> int:
        session = build_plan_session(runtime, sink, approve=approve_unasked, plan_id=plan_id)
        plan = await session.run(goal, plan=given)
        if plan.status is PlanStatus.COMPLETED:
            return EXIT_OK
        if plan.status is PlanStatus.CANCELLED:
            return EXIT_CANCELLED
        return fail(f"plan failed: {session.failure}", EXIT_FAILED)

    return run_async(lambda: with_runtime(settings, sink, body))
