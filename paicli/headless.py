"""`paicli run` and `paicli plan --yes` without a screen: JSON-lines events or progress on stderr, exit codes.

A front end: it builds a sink, asks paicli.app to drive the turn or the plan, and turns the outcome into
output and an exit code. It never imports the other front end (paicli.ui).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TextIO, assert_never

from paicli.app.checkpoints.command import undo_answer
from paicli.app.checkpoints.report import changed_line
from paicli.app.checkpoints.service import Checkpoints, attach_checkpoints, open_store
from paicli.app.conversations import ConversationLog, latest_session, restore, session_store
from paicli.app.custom_commands import invocation
from paicli.app.driver import run_plan, run_turn, run_with_signals
from paicli.app.figures import ESTIMATED_NOTE, arrows, retries_line
from paicli.app.jsonl import JsonLinesSink
from paicli.app.plan_inputs import PlanRequest
from paicli.app.servers import settle_servers
from paicli.common.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ConfigError, PaicliError
from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
    EventSink,
    FileChange,
    ModelUsage,
    Notice,
    PlanApproved,
    PlanCreated,
    PlanFinished,
    PlanTaskStreamed,
    ReasoningDelta,
    ReplanEvent,
    ReplyRestarted,
    ReviewEvent,
    RunFinished,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.sanitize import terminal_safe
from paicli.common.whole_writes import write_whole
from paicli.config import Settings, user_home
from paicli.llm.types import Message
from paicli.plan.model import PlanStatus
from paicli.runtime import Runtime, build_runtime, secret_values
from paicli.tools.output import mask_secrets


class ProgressSink:
    """Plain one-line progress on stderr for humans watching a headless run. Each thing is said once: a task
    that fails with the error of its last failed call (a direct action refused) points at that call's line."""

    def __init__(self, stream: TextIO, secrets: list[str]) -> None:
        self.stream = stream
        self.secrets = secrets
        self.finished: PlanFinished | None = None  # the plan's end, for the report at the end
        self._failed_call: dict[str | None, str] = {}  # per task, the output of its last failed call

    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, PlanFinished):
            self.finished = event
        if isinstance(event, PlanCreated):
            for text in plan_lines(event):
                self.stream.write(mask_secrets(text, self.secrets) + "\n")
        if isinstance(event, ToolResultEvent) and not event.ok:
            self._failed_call[event.task_id] = event.output.strip()
        elif isinstance(event, TaskFinished) and event.error and (said := self._failed_call.pop(event.task_id, "")):
            head, found, _ = event.error.partition(said)
            if found and head.strip():  # its error quotes the failed call shown above
                event = event.model_copy(update={"error": head.rstrip().rstrip(":") + " (above)"})
        line = progress_line(event)
        if line:
            self.stream.write(mask_secrets(line, self.secrets) + "\n")
            self.stream.flush()


def progress_line(event: AnyEvent) -> str | None:
    """One plain line for a human, or None. Model and tool text goes through the sanitizer (one line), so
    nothing it contains can drive the terminal; long text is cut at a word, with "…"."""
    line = _progress_line(event)
    return None if line is None else cut_at_word(flattened(line), PROGRESS_LIMIT)


def flattened(text: str) -> str:
    """Untrusted text made safe (paicli.common.sanitize) and flat: every run of whitespace, newlines too, one space."""
    return " ".join(terminal_safe(text).split())


PROGRESS_LIMIT = 400  # characters of one progress line (a refusal keeps its hint)
ARGUMENTS_LIMIT = 160  # characters of a call's arguments in its line


def _progress_line(event: AnyEvent) -> str | None:
    match event:
        case ToolCallEvent(task_id=task_id, name=name, arguments=arguments, summary=summary):
            return f"{_prefix(task_id)}→ {name} {cut_at_word(summary or call_arguments(arguments), ARGUMENTS_LIMIT)}"
        case ToolResultEvent(task_id=task_id, name=name, ok=False, output=output):
            first = next((line for line in output.split("\n") if line.strip()), "failed")
            return f"{_prefix(task_id)}✗ {name}: {cut_at_word(flattened(first), 300)}"
        case Notice(message=message):
            return f"paicli: {message}"
        case PlanTaskStreamed(task=task, tokens=tokens, elapsed=elapsed):
            after = f" after {', '.join(task.dependencies)}" if task.dependencies else ""
            return f"… planning ({tokens:,} tokens, {elapsed:.0f} s): {task.id} {task.type}{after}: {task.description}"
        case TaskStarted(task_id=task_id):
            return f"▶ {task_id} started"
        case TaskFinished(task_id=task_id, status=status, error=error):
            return f"■ {task_id} {status}{': ' + error if error else ''}"
        case ReplanEvent(round=number, reason=reason):
            return f"↻ replanning (round {number}): {reason}"
        case ReviewEvent(round=number, score=score, reflection=reflection):
            return f"★ review round {number}: {score:g}/10 — {reflection}"
        case ToolResultEvent() | PlanApproved() | ModelUsage() | RunFinished():
            return None  # a result that went well is the call's line; `paicli run` prints its answer itself
        case PlanCreated() | PlanFinished():
            return None  # the plan's lines (plan_lines) before it runs, its report (final_report) at the end
        case TextDelta() | ReasoningDelta() | CommandOutput() | ReplyRestarted() | ApprovalWaited():
            return None  # streamed: the end of a task or a result says it once
        case _:
            assert_never(event)


def _prefix(task_id: str | None) -> str:
    return f"[{task_id}] " if task_id else ""


def call_arguments(arguments: dict[str, Any] | str) -> str:
    """A call's arguments as a person would write them: `path=src/a.py content="def add(a, b): …"`."""
    if isinstance(arguments, str):
        return cut_at_word(flattened(arguments), ARGUMENTS_LIMIT)
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        flat = cut_at_word(flattened(text), ARGUMENTS_LIMIT)
        parts.append(f'{key}="{flat}"' if " " in flat or not flat else f"{key}={flat}")
    return " ".join(parts)


def cut_at_word(text: str, limit: int) -> str:
    """`text` of at most `limit` characters, cut at the last space before it (with "…") when too long, and
    never inside an escape the sanitizer wrote (`\x1b`, `\u202e`)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    cut = cut[:space] if space > limit // 2 else PARTIAL_ESCAPE.sub("", cut)
    return cut.rstrip() + "…"


PARTIAL_ESCAPE = re.compile(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,5})?$")  # what a cut may leave of an escape


def plan_lines(event: PlanCreated) -> list[str]:
    """The plan once, before it runs: a heading, then a line per task."""
    tasks = event.plan.tasks
    heading = f"Plan (round {event.round}, {len(tasks)} task{'s' if len(tasks) != 1 else ''}): {event.plan.summary}"
    lines = [cut_at_word(flattened(heading), PROGRESS_LIMIT)]
    for task in tasks:
        after = f" after {', '.join(task.dependencies)}" if task.dependencies else ""
        lines.append("  " + cut_at_word(flattened(f"{task.id} {task.type}{after}: {task.description}"), PROGRESS_LIMIT))
    return lines


def usage_line(event: PlanFinished) -> str:
    """What `paicli plan --yes` prints on stderr at the end: the status, the tokens and the retries."""
    usage = event.usage
    tokens = f"{arrows(usage)} tokens" + (ESTIMATED_NOTE if usage.estimated else "")
    retried = retries_line(event.retries)
    return f"Plan {event.status} · {tokens}" + (f" · {retried}" if retried else "")


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


def run_command(settings: Settings, prompt: str, *, json_mode: bool, continue_last: bool = False) -> int:
    """`paicli run`: one turn, saved as a conversation (`continue_last`: the workspace's last one goes on).
    `paicli run /NAME ARGS` sends a custom command's prompt (paicli/app/custom_commands.py), or plans it
    as `paicli plan --yes` would when the command says `plan: true`."""
    settings.require_key()
    custom = invocation(prompt, settings.workspace, user_home())
    allowed = custom.command.allowed_tools if custom is not None else None
    if custom is not None and custom.command.plan:
        if continue_last:
            raise ConfigError(f"{custom.command.name} plans (plan: true): -c/--continue goes with a chat turn")
        request = PlanRequest(custom.text, notices=custom.notices, allowed_tools=allowed)
        return plan_command(settings, request, json_mode=json_mode)
    sink = make_sink(settings, json_mode)

    async def body(runtime: Runtime) -> int:
        for notice in custom.notices if custom is not None else ():
            sink.emit(Notice(level="warning", message=notice))
        log, earlier = saved_conversation(runtime, sink, continue_last)
        messages = [
            {"role": "system", "content": runtime.system_prompt(None)},
            *earlier,
            {"role": "user", "content": custom.text if custom is not None else prompt},
        ]
        with closing_checkpoints(attach_checkpoints(runtime, sink)) as checkpoints:
            turn = await run_turn(runtime, sink, messages, checkpoints=checkpoints, allowed_tools=allowed)
        log.save(turn.messages, turn.result.usage.total if turn.result is not None else 0)
        tell_changes(turn.changes, json_mode)
        if turn.error is not None:
            return fail(str(turn.error), turn.exit_code())
        if turn.result is None:  # cancelled: SIGINT/SIGTERM cancel the whole run, see run_with_signals
            return turn.exit_code()
        sink.emit(RunFinished(content=turn.result.content, usage=turn.result.usage, changes=turn.changes))
        if not json_mode:
            write_whole(sys.stdout, terminal_safe(mask_secrets(turn.result.content, runtime.secrets())) + "\n")
        return EXIT_OK

    return run_with_signals(lambda: with_runtime(settings, sink, body))


def saved_conversation(runtime: Runtime, sink: EventSink, continue_last: bool) -> tuple[ConversationLog, list[Message]]:
    """Where `paicli run` saves its turn, and the earlier messages it continues (none without -c)."""

    def warn(message: str) -> None:
        sink.emit(Notice(level="warning", message=message))

    log = ConversationLog(
        session_store(runtime.settings, runtime.home, runtime.secrets()), model=runtime.llm.model, notify=warn
    )
    if not continue_last:
        return log, []
    session = latest_session(log.store)
    if session is None:
        warn("no earlier conversation in this workspace: starting a new one")
        return log, []
    restored = restore(session, runtime.settings.context_tokens, runtime.system_prompt(None))
    for notice in restored.notices():
        warn(notice)
    log.continue_in(session.summary.id, restored.messages)
    return log, restored.messages


def plan_command(settings: Settings, request: PlanRequest, *, json_mode: bool) -> int:
    """`paicli plan --yes`: the plan is approved unasked and runs to the end."""
    sink = make_sink(settings, json_mode)

    async def body(runtime: Runtime) -> int:
        for message in request.notices:
            sink.emit(Notice(level="warning", message=message))
        with closing_checkpoints(attach_checkpoints(runtime, sink)) as checkpoints:
            outcome = await run_plan(
                runtime,
                sink,
                goal=request.goal,
                plan=request.plan,
                plan_id=request.plan_id,
                checkpoints=checkpoints,
                allowed_tools=request.allowed_tools,
            )
        # stdout ends with the answer, as for `run`; the rest, once, on stderr (each task's error came as it failed)
        if isinstance(sink, ProgressSink):
            if sink.finished is not None:
                print(mask_secrets(usage_line(sink.finished), runtime.secrets()), file=sys.stderr)
            if outcome.status is PlanStatus.COMPLETED and outcome.summary and outcome.summary.strip():
                write_whole(sys.stdout, mask_secrets(terminal_safe(outcome.summary).strip(), runtime.secrets()) + "\n")
        tell_changes(outcome.changes, json_mode)
        if outcome.status is PlanStatus.FAILED:
            said = outcome.message() if json_mode else outcome.brief_message()
            return fail(said or "", outcome.exit_code())
        return outcome.exit_code()

    return run_with_signals(lambda: with_runtime(settings, sink, body))


@contextlib.contextmanager
def closing_checkpoints(checkpoints: Checkpoints | None) -> Iterator[Checkpoints | None]:
    """The command's checkpoints, their worker finished and stopped when the command is (so that the
    process can end without waiting for the interpreter to do it: paicli/process_exit.py)."""
    try:
        yield checkpoints
    finally:
        if checkpoints is not None:
            checkpoints.close()


def tell_changes(changes: list[FileChange] | None, json_mode: bool) -> None:
    """The "Changed: …" line on stderr for a human (with --json the end event carries the changes)."""
    if changes and not json_mode:
        print(changed_line(changes, "paicli undo to revert"), file=sys.stderr)


def undo_command(
    settings: Settings,
    entry_id: str | None,
    *,
    task: str | None,
    dry_run: bool,
    force: bool,
    list_only: bool,
    redo: bool,
) -> int:
    """`paicli undo`: exit 0 done, 1 nothing to undo or refused, 2 usage (an unknown id included)."""
    store = open_store(settings, user_home(), lambda text: print(f"paicli: {terminal_safe(text)}", file=sys.stderr))
    if store is None:
        return fail("paicli undo needs git, and git is not installed", EXIT_USAGE)
    answer = undo_answer(store, entry_id, task=task, dry_run=dry_run, force=force, list_only=list_only, redo=redo)
    for line in answer.out:
        print(line)
    for line in answer.err:
        print(f"paicli: {line}" if line is answer.err[0] else line, file=sys.stderr)
    return answer.code
