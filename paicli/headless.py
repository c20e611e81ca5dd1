"""`paicli run` and `paicli plan --yes` without a screen: JSON-lines events or progress on stderr, exit codes.

A front end: it builds a sink, asks paicli.app to drive the turn or the plan, and turns the outcome into
output and an exit code. It never imports the other front end (paicli.ui).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from paicli.app.driver import run_plan, run_turn, run_with_signals
from paicli.app.jsonl import JsonLinesSink
from paicli.app.plan_inputs import PlanRequest
from paicli.app.servers import settle_servers
from paicli.config import Settings
from paicli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ConfigError, PaicliError
from paicli.events import Event, EventSink, Notice, RunFinished
from paicli.plan.model import PlanStatus
from paicli.runtime import Runtime, build_runtime, secret_values
from paicli.sanitize import terminal_safe
from paicli.tools.output import mask_secrets


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
        summary = data.get("summary") or json.dumps(data["arguments"], ensure_ascii=False)
        return f"{prefix}→ {data['name']} {summary[:160]}"
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


def fail(message: str, code: int) -> int:
    print(f"paicli: {terminal_safe(message)}", file=sys.stderr)
    return code


async def with_runtime(settings: Settings, sink: EventSink, body: Callable[[Runtime], Awaitable[int]]) -> int:
    runtime = build_runtime(settings, sink)
    try:
        await settle_servers(runtime, sink)
        return await body(runtime)
    except PaicliError as err:  # raised before any turn or plan ran (e.g. by building the client)
        return fail(str(err), EXIT_USAGE if isinstance(err, ConfigError) else EXIT_FAILED)
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
        turn = await run_turn(runtime, sink, messages)
        if turn.error is not None:
            return fail(str(turn.error), turn.exit_code())
        if turn.result is None:  # cancelled: SIGINT/SIGTERM cancel the whole run, see run_with_signals
            return turn.exit_code()
        sink.emit(RunFinished(content=turn.result.content, usage=turn.result.usage))
        if not json_mode:
            print(terminal_safe(mask_secrets(turn.result.content, runtime.secrets())))
        return EXIT_OK

    return run_with_signals(lambda: with_runtime(settings, sink, body))


def plan_command(settings: Settings, request: PlanRequest, *, json_mode: bool) -> int:
    """`paicli plan --yes`: the plan is approved unasked and runs to the end."""
    sink = make_sink(settings, json_mode)

    async def body(runtime: Runtime) -> int:
        for message in request.notices:
            sink.emit(Notice(level="warning", message=message))
        outcome = await run_plan(runtime, sink, goal=request.goal, plan=request.plan, plan_id=request.plan_id)
        if outcome.status is PlanStatus.FAILED:
            return fail(outcome.message() or "", outcome.exit_code())
        return outcome.exit_code()

    return run_with_signals(lambda: with_runtime(settings, sink, body))

