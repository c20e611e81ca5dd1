"""What a plan shows once it has finished, printed once under the live view.

A COMPLETED plan shows what was done: the table of its completed tasks, then, when a replan got it there,
each task that failed or was skipped on the way as one row (the first line of why), then the summary. A
FAILED or CANCELLED plan shows every task, then why each failed (in full for this round's failures, which
the user now has to act on; one row each for earlier rounds', which a replan already answered) and what
was skipped and why. Then the usage, retries, and the estimate beside what was used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.text import Text

from paicli.app.figures import retries_line, usage_line
from paicli.common.events import PlanFinished
from paicli.common.values import Usage
from paicli.plan.model import PlanStatus, TaskStatus
from paicli.ui.chat.one_row import OneRow
from paicli.ui.plan.plan_facts import estimate_vs_actual
from paicli.ui.plan.plan_view import count_statuses, status_icon, text_lines
from paicli.ui.plan.task_table import TaskRow, task_lines

FINAL_STYLES = {"COMPLETED": "bold green", "FAILED": "bold red", "CANCELLED": "bold yellow"}


def final_report(
    event: PlanFinished,
    everyone: Mapping[str, TaskRow],
    current_round: int,
    usage: Usage,
    safe: Callable[[str], str],
) -> list[RenderableType]:
    """The report's parts, in order (see the module docstring). `usage`: every request the view saw, used
    when the event carries none."""
    rows = list(everyone.values())
    completed = event.status is PlanStatus.COMPLETED
    fixed = [row for row in rows if row.status in (TaskStatus.FAILED, TaskStatus.SKIPPED)] if completed else []
    shown = [row for row in rows if row not in fixed]
    parts: list[RenderableType] = [Text(""), _heading(event.status, shown, current_round)]
    if any(row.started is not None or row.status is not TaskStatus.PENDING for row in shown):
        parts.append(task_lines(shown, everyone, time.time(), safe))  # (a plan cancelled in review ran nothing)
    if fixed:
        parts.append(Text("Fixed by a replan", style="bold"))
        parts += [_one_row(row) for row in fixed]
    for title, status in (("Failed", TaskStatus.FAILED), ("Skipped", TaskStatus.SKIPPED)):
        chosen = [row for row in shown if row.status is status]
        if chosen:
            parts.append(Text(title, style="bold"))
        for row in chosen:
            whole = status is TaskStatus.FAILED and row.round >= current_round
            parts.append(_reason(row) if whole else _one_row(row, earlier=row.round < current_round))
    if event.summary and event.summary.strip():
        parts += [Text(""), Markdown(safe(event.summary), hyperlinks=False)]
    used = event.usage if event.usage.total else usage
    parts.append(Text(usage_line(used), style="dim"))
    if (retried := retries_line(event.retries)) is not None:
        parts.append(Text(retried, style="dim"))
    if event.estimate is not None and event.estimate.requests:
        parts.append(Text(estimate_vs_actual(event.estimate, event.requests, used), style="dim"))
    return parts


def _heading(status: PlanStatus, shown: Sequence[TaskRow], current_round: int) -> Text:
    """`Plan COMPLETED · 5 tasks done in 2 rounds`, `Plan FAILED · 4 tasks: 2 completed, 1 failed, 1 skipped`."""
    heading = Text(f"Plan {status}", style=FINAL_STYLES[status])
    if status is PlanStatus.COMPLETED:
        heading.append(f" · {len(shown)} task{'s' if len(shown) != 1 else ''} done")
        heading.append(f" in {current_round} rounds" if current_round > 1 else "")
        return heading
    total = f"{len(shown)} task" + ("" if len(shown) == 1 else "s")
    heading.append(f" · {total}: {count_statuses(row.status for row in shown)}" if shown else f" · {total}")
    return heading


def _one_row(row: TaskRow, *, earlier: bool = True) -> OneRow:
    """`  ✗ task_3 (round 1): the tests failed`: the first line of why, on one row."""
    reason = next(iter(text_lines(row.error)), "") or "no reason given"
    when = f" (round {row.round})" if earlier else ""
    return OneRow(Text.assemble("  ", status_icon(row.status), " ", (row.id, "bold"), f"{when}: {reason}"))


def _reason(row: TaskRow) -> Text:
    """`  ✗ task_3: <why, every line>` for a failure of the last round: the user acts on it."""
    reason = row.error.strip() or "no reason given"
    return Text.assemble("  ", status_icon(row.status), " ", (row.id, "bold"), f": {reason}")
