"""The plan while it runs: a live task table, then the outcome once.

`LivePlanView` is the EventSink of one `/plan` (use it as a context manager, or `start()`/`stop()`):

- on a terminal, a compact table redrawn about four times a second in a transient `rich.live.Live`:
  status icon, id, type badge, elapsed time (ticking while running), tokens, and what the task is doing
  (its last tool call, "execute_command: pytest -q") or how it ended (result, error, skip reason), one
  line per task, cut with "…" at the terminal's edge. Streamed text (`text_delta`) is ignored, so
  parallel tasks' text is never interleaved;
- anywhere else (a pipe, a log file), plain lines as tasks start, call tools and finish;
- when `plan_finished` arrives: the final table printed once, the failures with their reasons, what was
  skipped and why, the summary as Markdown, and a usage line.

While the planner writes, each task appears as its object in the reply completes (`plan_task_streamed`),
under "Planning… 12 s · ~640 tokens"; a reply asked again (`reply_restarted` without a task) takes them
away. `plan_created` hides the table (a review screen is about to show the plan) until `plan_approved`;
`pause()`/`resume()` (or `with view.paused():`) do the same for any other prompt, such as a command
approval. Events are recorded while hidden. Text from the model or a tool is cleaned of control
characters (and secrets) as it arrives and only ever shown as `Text` (the summary as `Markdown`), never
parsed as markup. Redraws come from an asyncio task, not rich's refresh thread, so only the event loop
touches the state.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import assert_never, cast

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from paicli.app.figures import format_duration
from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
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
from paicli.common.shown import inline
from paicli.common.values import Usage
from paicli.llm.endpoint import RateStatus
from paicli.plan.model import Plan, PlanStatus, TaskStatus, TaskType
from paicli.tools.output import mask_secrets
from paicli.ui.chat.changes_view import ColorSystemName
from paicli.ui.chat.command_live import RunningCall
from paicli.ui.chat.diff_view import counts_text
from paicli.ui.chat.preview import result_preview
from paicli.ui.chat.reflow import transient_live
from paicli.ui.chat.render import NOTICE_STYLES, tool_summary
from paicli.ui.plan.final_report import final_report
from paicli.ui.plan.plan_view import count_statuses, fold, status_icon
from paicli.ui.plan.task_table import TaskRow, rows_to_hide, task_lines, task_outcome

REFRESH_PER_SECOND = 4.0


class LivePlanView:
    def __init__(
        self,
        console: Console,
        *,
        plan: Plan | None = None,
        refresh_per_second: float = REFRESH_PER_SECOND,
        secrets: Sequence[str] = (),
        rate: Callable[[], RateStatus | None] | None = None,
    ) -> None:
        self.console = console
        self.rate = rate  # what rate limiting holds back now (the client's endpoint), shown under the table
        self.refresh_per_second = refresh_per_second
        self.secrets = [secret for secret in secrets if secret]
        self.rows: dict[str, TaskRow] = {}
        self.round = 1
        self.usage = Usage()  # every model request seen, the planner's included
        self._started = False
        self._awaiting_approval = False
        self._waiting_for: tuple[str, float] | None = None  # ("Planning" or "Replanning", since when)
        self._pauses = 0
        self._finished = False
        self._live: Live | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._last_refresh = 0.0
        self._calls: dict[str, tuple[str, RunningCall]] = {}  # task id → its running call and what it shows
        self._streamed: set[str] = set()  # rows of tasks the planner is still writing (no plan_created yet)
        self._streamed_tokens = 0
        if plan is not None:
            self.set_plan(plan)

    # ---- lifecycle ----

    def start(self) -> None:
        self._started = True
        if not self.rows:  # the planner is at work: say so until the plan arrives
            self._waiting_for = ("Planning", time.time())
        self._update_display()

    def stop(self) -> None:
        self._started = False
        self._update_display()

    def pause(self) -> None:
        """Hides the live table (for a prompt); events are still recorded. Calls nest."""
        self._pauses += 1
        self._update_display()

    def resume(self) -> None:
        self._pauses = max(0, self._pauses - 1)
        self._update_display()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def __enter__(self) -> LivePlanView:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def set_plan(self, plan: Plan) -> None:
        """Takes the tasks, and what is known of their runs, from a Plan (one resumed from disk, say)."""
        self.round = plan.round
        self.rows = {}
        for task in plan.tasks:
            self.rows[task.id] = TaskRow(
                id=self._safe(task.id),
                type=task.type,
                description=self._safe(task.description),
                dependencies=list(task.dependencies),
                status=task.status,
                round=task.round,
                started=task.started_at,
                finished=task.finished_at,
                waited=task.waited,
                usage=task.usage,
                result=self._safe(task.result or ""),
                error=self._safe(task.error or ""),
            )
        self._refresh(force=True)

    # ---- EventSink ----

    def emit(self, event: AnyEvent) -> None:
        row = self.rows.get(getattr(event, "task_id", None) or "")
        match event:
            case PlanCreated():
                self._plan_created(event)
            case PlanTaskStreamed():
                self._task_streamed(event)
            case PlanApproved():
                self._awaiting_approval = False
                self._update_display()
            case TaskStarted():
                row = row or self._new_row(event.task_id)
                row.status, row.started, row.finished, row.waited = TaskStatus.RUNNING, event.ts, None, 0.0
                row.activity, row.activity_failed, row.error = "", False, ""
                self._plain(Text.assemble(status_icon(row.status), " ", (row.id, "bold"), " started"))
            case ToolCallEvent():
                if row is not None:
                    self._tool_call(row, event)
            case CommandOutput():
                if row is not None and row.id in self._calls:
                    self._command_output(row, event)
            case ToolResultEvent():
                if row is not None:
                    self._tool_result(row, event)
            case ReasoningDelta():
                if row is not None:
                    row.activity, row.activity_failed = "thinking…", False
            case ModelUsage():
                self.usage = self.usage + event.usage
                if row is not None:
                    row.usage = row.usage + event.usage
            case TaskFinished():
                row = row or self._new_row(event.task_id)
                row.status, row.finished = TaskStatus(event.status), event.ts
                row.result, row.error = self._safe(event.result or ""), self._safe(event.error or "")
                self._plain(self._finished_line(row))
            case ReplanEvent():
                self._waiting_for = ("Replanning", event.ts)
                reason = self._safe(event.reason)
                self._say(Text.assemble(("↻ Replanning", "bold yellow"), f" (round {event.round}): {reason}"))
            case ReviewEvent():
                verdict = Text.assemble(("Review", "bold"), f" of round {event.round}: {event.score:g}/10")
                if event.reflection.strip():
                    verdict.append(" · " + fold(self._safe(event.reflection)), style="dim")
                self._say(verdict)
            case Notice():
                self._say(Text(self._safe(event.message), style=NOTICE_STYLES[event.level]))
            case PlanFinished():
                self._plan_finished(event)
            case ApprovalWaited():
                if row is not None:  # its timer does not count the wait for the user
                    row.waited += event.seconds
            case ReplyRestarted():
                if event.task_id is None:  # the planner's reply is asked again: its tasks so far are void
                    for task_id in self._streamed:
                        self.rows.pop(task_id, None)
                    self._streamed.clear()
            case TextDelta() | RunFinished():
                pass  # parallel tasks' streamed text would interleave: a task shows its calls and its end
            case _:
                assert_never(event)
        self._refresh()

    def _tool_call(self, row: TaskRow, event: ToolCallEvent) -> None:
        row.activity = self._safe(f"{event.name}: {tool_summary(event)}".rstrip(": "))
        row.activity_failed = False
        self._calls[row.id] = (row.activity, RunningCall(event.name, time.monotonic()))
        self._plain(Text(f"  {row.id} › {inline(row.activity)}", style="dim"))

    def _command_output(self, row: TaskRow, event: CommandOutput) -> None:
        call, running = self._calls[row.id]
        running.add_output(event.text)
        last = running.last_lines()[-1:]
        row.activity = f"{call} ⎿ {self._safe(last[0])}" if last else call

    def _tool_result(self, row: TaskRow, event: ToolResultEvent) -> None:
        call, _ = self._calls.pop(row.id, (row.activity, None))
        preview = result_preview(event.name, event.ok, event.output)
        outcome = self._safe(preview.headline) + (f" {counts_text(event.diff).plain}" if event.diff else "")
        row.activity, row.activity_failed = f"{call} ⎿ {outcome}", not event.ok or preview.failed
        self._plain(Text(f"  {row.id} ⎿ {fold(outcome)}", style="dim"))

    def _task_streamed(self, event: PlanTaskStreamed) -> None:
        if self._finished:  # a new plan in the same view: start afresh
            self.rows, self.usage, self._finished = {}, Usage(), False
        view = event.task
        if view.id in self.rows and view.id not in self._streamed:
            return  # a task of an earlier round keeps its row (the new one is renamed when the plan arrives)
        row = self.rows[view.id] = TaskRow(id=self._safe(view.id), round=event.round)
        row.type, row.description = TaskType.lenient(view.type), self._safe(view.description)
        row.dependencies = list(view.dependencies)
        self._streamed.add(view.id)
        self._streamed_tokens = event.tokens
        self._plain(Text.assemble(("· ", "dim"), (row.id, "bold"), f" planned: {fold(row.description)}"))
        self._update_display()

    def _plan_created(self, event: PlanCreated) -> None:
        self._streamed.clear()
        self._waiting_for = None
        if self._finished:  # a new plan in the same view: start afresh
            self.rows, self.usage, self._finished = {}, Usage(), False
        self.round = event.round
        rows: dict[str, TaskRow] = {}
        for view in event.plan.tasks:  # after a replan: earlier tasks keep what is known of their runs
            row = rows[view.id] = self.rows.get(view.id) or TaskRow(id=self._safe(view.id), round=event.round)
            row.type, row.description = TaskType.lenient(view.type), self._safe(view.description)
            row.dependencies, row.status = list(view.dependencies), TaskStatus(view.status)
        self.rows = rows
        self._awaiting_approval = True  # a review of the plan comes first
        self._update_display()

    def _new_row(self, task_id: str) -> TaskRow:
        """A task the view was never told about (no plan_created seen): shown rather than dropped."""
        row = self.rows[task_id] = TaskRow(id=self._safe(task_id), round=self.round)
        return row

    def _plan_finished(self, event: PlanFinished) -> None:
        if event.status is PlanStatus.CANCELLED:  # stopped tasks go back to PENDING, as the saved plan has them
            for row in self.rows.values():
                if row.status is TaskStatus.RUNNING:
                    row.status = TaskStatus.PENDING
        self._finished = True
        self._waiting_for = None
        self._update_display()
        for part in final_report(event, self.rows, self.round, self.usage, self._safe):
            self.console.print(part)

    # ---- the live display ----

    def _update_display(self) -> None:
        visible = self._started and self.console.is_terminal and bool(self.rows or self._waiting_for)
        visible = visible and not (self._finished or self._awaiting_approval or self._pauses)
        if visible and self._live is None:
            self._live = transient_live(self.console, self._render())
            with contextlib.suppress(RuntimeError):  # no event loop: redrawn on events only
                self._ticker = asyncio.get_running_loop().create_task(self._tick(), name="paicli-live-plan")
        elif not visible and self._live is not None:
            if self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None
            self._live.stop()
            self._live = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0 / self.refresh_per_second)
            self._refresh(force=True)

    def _refresh(self, force: bool = False) -> None:
        if self._live is None:
            return
        now = time.monotonic()
        if not force and now - self._last_refresh < 1.0 / self.refresh_per_second:
            return  # the ticker draws it soon enough
        self._last_refresh = now
        self._live.update(self._render(), refresh=True)

    def snapshot(self, columns: int, rows: int) -> str:
        """The live table as ANSI text in `columns` × at most `rows`, for a prompt that draws it above itself
        while the view is paused (an approval question: the plan stays in sight and keeps updating)."""
        if not self.rows and self._waiting_for is None:
            return ""
        buffer = io.StringIO()
        system = cast(ColorSystemName | None, self.console.color_system)
        copy = Console(file=buffer, width=columns, height=rows, color_system=system, force_terminal=True)
        copy.print(self._render(room=rows - 2))
        return buffer.getvalue()

    def _render(self, room: int | None = None) -> RenderableType:
        waiting = None
        if self._waiting_for is not None:
            label, since = self._waiting_for
            tokens = f" · ~{self._streamed_tokens:,} tokens" if self._streamed else ""
            waiting = Text.assemble(
                (f"{label}…", "bold"), f" {format_duration(time.time() - since)}{tokens}", (" · Esc cancels", "dim")
            )
            if not self.rows:
                return waiting
        rows = list(self.rows.values())
        room = max(2, self.console.height - 3 if room is None else room)  # taller than the screen: not redrawable
        hidden = rows_to_hide(rows, room)
        title = "Plan so far" if self._streamed and len(self._streamed) == len(self.rows) else "Running plan"
        heading = Text.assemble((title, "bold"), f" · round {self.round}" if self.round > 1 else "")
        heading.append(f" · {self._counts()}", style="dim")
        parts: list[RenderableType] = [heading, self._table([row for row in rows if row.id not in hidden], time.time())]
        if hidden:
            counts = count_statuses(row.status for row in hidden.values())
            parts.append(Text(f"… {len(hidden)} more: {counts}", style="dim"))
        if waiting is not None:
            parts.append(waiting)
        status = self.rate() if self.rate is not None else None
        if status is not None:
            parts.append(Text(status.line(), style="yellow"))
        return Group(*parts)

    # ---- pieces ----

    def _table(self, rows: Sequence[TaskRow], now: float) -> Group:
        return task_lines(rows, self.rows, now, self._safe)

    def _outcome(self, row: TaskRow) -> Text:
        return task_outcome(row, self.rows, self._safe)

    def _finished_line(self, row: TaskRow) -> Text:
        line = Text.assemble(status_icon(row.status), " ", (row.id, "bold"), f" {row.status.value.lower()}")
        elapsed = row.elapsed(time.time())
        if elapsed is not None and row.status is not TaskStatus.SKIPPED:
            line.append(f" in {format_duration(elapsed)}")
        outcome = self._outcome(row)
        if outcome.plain:
            line.append(": ")
            line.append_text(outcome)
        return line

    def _counts(self) -> str:
        total = f"{len(self.rows)} task" + ("" if len(self.rows) == 1 else "s")
        return f"{total}: {count_statuses(row.status for row in self.rows.values())}" if self.rows else total

    def _plain(self, line: Text) -> None:
        """Progress lines, only when there is no live table to show progress."""
        if not self.console.is_terminal:
            self.console.print(line)

    def _say(self, line: Text) -> None:
        self.console.print(line)  # above the live table while it is shown

    def _safe(self, text: str) -> str:
        return mask_secrets(terminal_safe(text), self.secrets)
