"""The plan's task table: one aligned line per task, as the live view and the final report show it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text

from paicli.app.figures import format_duration, format_tokens
from paicli.common.shown import headline
from paicli.common.values import Usage
from paicli.plan.model import TaskStatus, TaskType
from paicli.ui.chat.one_row import OneRow
from paicli.ui.plan.plan_view import fold, status_icon, type_badge

MAX_ID_WIDTH = 24
HIDE_FIRST = (TaskStatus.COMPLETED, TaskStatus.SKIPPED, TaskStatus.PENDING, TaskStatus.FAILED, TaskStatus.RUNNING)


@dataclass
class TaskRow:
    """What the view knows of one task; every text is already cleaned."""

    id: str
    type: TaskType = TaskType.ANALYSIS
    description: str = ""
    dependencies: list[str] = field(default_factory=list)
    status: TaskStatus = TaskStatus.PENDING
    round: int = 1
    started: float | None = None
    finished: float | None = None
    waited: float = 0.0  # seconds of it spent waiting for the user's answers (not counted)
    activity: str = ""  # the last tool call of a running task
    activity_failed: bool = False
    usage: Usage = field(default_factory=Usage)
    result: str = ""
    error: str = ""

    def elapsed(self, now: float) -> float | None:
        if self.started is None:
            return None
        return max(0.0, (self.finished if self.finished is not None else now) - self.started - self.waited)


def task_lines(
    rows: Sequence[TaskRow], everyone: Mapping[str, TaskRow], now: float, safe: Callable[[str], str]
) -> Group:
    """One row per task, columns aligned by padding (a rich Table squeezes every column when narrow; here
    only the last one, the activity, is cut, at a space with "…")."""
    elapsed = [row.elapsed(now) for row in rows]
    times = [format_duration(seconds) if seconds is not None else "" for seconds in elapsed]
    tokens = [format_tokens(row.usage.total, row.usage.estimated) if row.usage.total else "" for row in rows]
    id_width = min(MAX_ID_WIDTH, max((len(row.id) for row in rows), default=0))
    time_width = max(map(len, times), default=0)
    token_width = max(map(len, tokens), default=0)
    lines = []
    for row, spent, used in zip(rows, times, tokens, strict=True):
        shown_id = row.id if len(row.id) <= id_width else row.id[: id_width - 1] + "…"
        line = Text.assemble(status_icon(row.status), " ", (shown_id.ljust(id_width), "bold"), " ")
        line.append_text(type_badge(row.type, padded=True))
        columns = [spent.rjust(time_width)] if time_width else []
        columns += [used.rjust(token_width)] if token_width else []
        line.append(" " + " ".join([*columns, ""]), style="dim")
        line.append_text(task_outcome(row, everyone, safe))
        lines.append(OneRow(line))
    return Group(*lines)


def task_outcome(row: TaskRow, everyone: Mapping[str, TaskRow], safe: Callable[[str], str]) -> Text:
    """What a running task does, how a finished one ended, what a pending one waits for."""
    if row.status is TaskStatus.RUNNING:
        return Text(
            headline(row.activity) if row.activity else "working…", style="red" if row.activity_failed else "cyan"
        )
    if row.status is TaskStatus.COMPLETED:
        return Text(fold(row.result) or "done")
    if row.status in (TaskStatus.FAILED, TaskStatus.SKIPPED):
        return Text(fold(row.error), style="red" if row.status is TaskStatus.FAILED else "yellow")
    waiting = [dep for dep in row.dependencies if dep in everyone and everyone[dep].status is not TaskStatus.COMPLETED]
    text = "waits for " + ", ".join(safe(dep) for dep in waiting) if waiting else fold(row.description)
    return Text(text, style="dim")


def rows_to_hide(rows: list[TaskRow], room: int) -> dict[str, TaskRow]:
    """Rows left out of a live table with `room` lines: the oldest finished ones first, then the pending ones
    furthest away; running ones last."""
    if len(rows) <= room:
        return {}
    order = {id(row): index for index, row in enumerate(rows)}

    def rank(row: TaskRow) -> tuple[int, int]:
        later_first = -1 if row.status is TaskStatus.PENDING else 1
        return HIDE_FIRST.index(row.status), later_first * order[id(row)]

    ranked = sorted(rows, key=rank)
    return {row.id: row for row in ranked[: len(rows) - room + 1]}  # one line says what is hidden
