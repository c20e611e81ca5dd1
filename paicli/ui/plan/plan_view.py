"""A plan as rich renderables: what runs together (levels), what each task is, what it waits for.

Pure functions: nothing here prints. Everything a model wrote (ids, descriptions, the summary) is
untrusted, so it goes into `Text` objects after `terminal_safe()` and is never parsed as rich markup.

Layout (no tables, so it wraps cleanly down to 40 columns):

    <summary text>
    4 tasks · 3 levels · critical path 3 tasks

    Level 1
      ○ task_1 READ
        Read src/app.py and note the entry points…
    Level 2 · runs in parallel
      ○ task_2 WRITE after task_1
        …

After a replan, the finished tasks of earlier rounds come first under "Done in earlier rounds"; the
levels and counts are those of the tasks still to run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from paicli.common.sanitize import terminal_safe
from paicli.plan import dag
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.ui.chat.one_row import OneRow

TYPE_BADGES: dict[TaskType, tuple[str, str]] = {
    TaskType.FILE_READ: ("READ", "cyan"),
    TaskType.FILE_WRITE: ("WRITE", "magenta"),
    TaskType.COMMAND: ("CMD", "yellow"),
    TaskType.ANALYSIS: ("THINK", "blue"),
    TaskType.VERIFICATION: ("CHECK", "green"),
}
BADGE_WIDTH = max(len(label) for label, _ in TYPE_BADGES.values())

STATUS_ICONS: dict[TaskStatus, tuple[str, str]] = {
    TaskStatus.PENDING: ("○", "dim"),
    TaskStatus.RUNNING: ("●", "bold cyan"),
    TaskStatus.COMPLETED: ("✓", "green"),
    TaskStatus.FAILED: ("✗", "bold red"),
    TaskStatus.SKIPPED: ("↷", "yellow"),
}

TASK_INDENT = 2  # a task line under its level heading
DESCRIPTION_INDENT = 4  # a description under its task line


def type_badge(task_type: TaskType, *, padded: bool = False) -> Text:
    """The short coloured label of a task type (READ, WRITE, CMD, THINK, CHECK)."""
    label, colour = TYPE_BADGES[task_type]
    return Text(label.ljust(BADGE_WIDTH) if padded else label, style=f"bold {colour}")


def status_icon(status: TaskStatus) -> Text:
    icon, style = STATUS_ICONS[status]
    return Text(icon, style=style)


def fold(text: str) -> str:
    """Untrusted text on one line: control characters gone, runs of whitespace (newlines too) one space."""
    return " ".join(terminal_safe(text).split())


def text_lines(text: str, *, collapse: bool = True) -> list[str]:
    """Untrusted text made safe, one entry per line (blank lines around it dropped); with `collapse`,
    whitespace runs within a line one space (for prose such as an error; commands and write sets go
    through paicli/common/shown.py, which never folds them)."""
    safe = terminal_safe(text).split("\n")
    lines = [" ".join(line.split()) if collapse else line.expandtabs(4).rstrip() for line in safe]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def dependencies_text(dependencies: Sequence[str]) -> Text:
    if not dependencies:
        return Text("")
    return Text("after " + ", ".join(fold(dep) for dep in dependencies), style="dim")


MARK_STYLES = {"new": "bold green", "changed": "bold yellow"}


def task_heading(task: Task, mark: str | None = None) -> Text:
    """`○ task_2 WRITE after task_1`: wraps at spaces on a narrow terminal, so the id stays visible. `mark`
    (`new`, `changed`) says what the last amend or edit did to the task."""
    line = Text.assemble(status_icon(task.status), " ", (fold(task.id), "bold"), " ", type_badge(task.type))
    if task.dependencies:
        line.append(" ")
        line.append_text(dependencies_text(task.dependencies))
    if mark is not None:
        line.append(" ")
        line.append(f"[{mark}]", style=MARK_STYLES.get(mark, "bold"))
    return line


def plan_changes(before: Plan, after: Plan) -> tuple[dict[str, str], list[str]]:
    """What an amend or an edit did: `new` or `changed` by task id (what runs, its type, what it waits for,
    what it may write), and the ids of the tasks it removed."""
    old = {task.id: task for task in before.tasks}
    marks: dict[str, str] = {}
    for task in after.tasks:
        was = old.get(task.id)
        if was is None:
            marks[task.id] = "new"
        elif _what_it_does(was) != _what_it_does(task):
            marks[task.id] = "changed"
    kept = {task.id for task in after.tasks}
    return marks, [task.id for task in before.tasks if task.id not in kept]


def _what_it_does(task: Task) -> tuple[object, ...]:
    return (task.description, task.type, task.dependencies, task.files, task.action)


def task_description(task: Task, *, expanded: bool) -> RenderableType:
    """Folded: one row cut at a space with "…" at the terminal's edge. Expanded: every line, wrapped."""
    if expanded:
        return Text(terminal_safe(task.description).strip())
    return OneRow(fold(task.description))


TaskFacts = Callable[[Task], Text | None]  # a line of facts under a task's description (paicli/ui/plan/plan_facts.py)


def render_task(
    task: Task, *, expanded: bool = False, facts: TaskFacts | None = None, mark: str | None = None
) -> RenderableType:
    lines = [
        Padding(task_heading(task, mark), (0, 0, 0, TASK_INDENT)),
        Padding(task_description(task, expanded=expanded), (0, 0, 0, DESCRIPTION_INDENT)),
    ]
    if facts is not None and (line := facts(task)) is not None:
        lines.append(Padding(line, (0, 0, 0, DESCRIPTION_INDENT)))
    return Group(*lines)


def earlier_tasks(plan: Plan) -> list[Task]:
    """Finished tasks of earlier rounds: shown apart, never run again."""
    return [task for task in plan.tasks if task.round < plan.round and task.finished]


def earlier_failure(task: Task) -> OneRow:
    """`✗ task_3 CMD: the tests failed`, on one row: the first line of why it failed or was skipped."""
    reason = next((line for line in text_lines(task.error or "") if line), "no reason given")
    row = Text.assemble(status_icon(task.status), " ", (fold(task.id), "bold"), " ", type_badge(task.type))
    row.append(f": {reason}", style="dim")
    return OneRow(row)


def tasks_to_run(plan: Plan) -> list[Task]:
    earlier = {task.id for task in earlier_tasks(plan)}
    return [task for task in plan.tasks if task.id not in earlier]


def _analysis(tasks: Sequence[Task]) -> dag.Analysis | None:
    """Levels and critical path of these tasks (dependencies outside them count as done, each task one
    step); None if they form a cycle."""
    ids = {task.id for task in tasks}
    analysis = dag.analyse({task.id: [dep for dep in task.dependencies if dep in ids] for task in tasks})
    return None if analysis.problems else analysis


def plan_levels(tasks: Sequence[Task]) -> list[list[str]] | None:
    """The levels of these tasks (dependencies outside them count as done); None if they form a cycle."""
    analysis = _analysis(tasks)
    return None if analysis is None else analysis.levels


def summary_line(plan: Plan, *, show_path: bool = False) -> Text:
    """`4 tasks · 3 levels · critical path 3 tasks` (for the tasks still to run)."""
    tasks = tasks_to_run(plan)
    parts = [_count(len(tasks), "task")]
    analysis = _analysis(tasks)
    if analysis is None:
        parts.append("dependencies form a cycle")
    else:
        parts.append(_count(len(analysis.levels), "level"))
        path = analysis.critical_path
        critical = f"critical path {_count(len(path), 'task')}"
        if show_path and len(path) > 1:
            critical += " (" + " → ".join(fold(task_id) for task_id in path) + ")"
        parts.append(critical)
    earlier = earlier_tasks(plan)
    done = sum(1 for task in earlier if task.status is TaskStatus.COMPLETED)
    if done:
        parts.append(f"{done} done earlier")
    if len(earlier) > done:
        parts.append(f"{len(earlier) - done} failed or skipped earlier")
    return Text(" · ".join(parts), style="dim")


def render_plan(
    plan: Plan,
    *,
    expanded: bool = False,
    facts: TaskFacts | None = None,
    marks: Mapping[str, str] | None = None,
    removed: Sequence[str] = (),
) -> RenderableType:
    """The whole plan: summary text, summary line, earlier rounds, then the tasks to run by level (each
    with its `facts` line, if any, and its mark: `new`, `changed`), then the tasks an amend `removed`."""
    marks = marks or {}
    parts: list[RenderableType] = []
    title = Text(f"Plan · round {plan.round}" if plan.round > 1 else "Plan", style="bold")
    parts.append(title)
    if plan.summary.strip():
        summary = terminal_safe(plan.summary).strip()
        parts.append(Text(summary) if expanded else Text(fold(summary)))
    parts.append(summary_line(plan, show_path=expanded))
    earlier = earlier_tasks(plan)
    done = [task for task in earlier if task.status is TaskStatus.COMPLETED]
    if done:
        parts.append(Text(""))
        parts.append(Text("Done in earlier rounds", style="bold dim"))
        parts.extend(render_task(task, expanded=expanded) for task in done)
    if len(earlier) > len(done):  # what this round replans: one row each, the reason's first line
        parts.append(Text(""))
        parts.append(Text("Failed or skipped in earlier rounds", style="bold dim"))
        parts.extend(Padding(earlier_failure(task), (0, 0, 0, TASK_INDENT)) for task in earlier if task not in done)
    tasks = tasks_to_run(plan)
    by_id = {task.id: task for task in tasks}
    levels = plan_levels(tasks)
    if levels is None:  # an invalid plan is still shown, in its own order
        parts.append(Text(""))
        parts.append(Text("Tasks (the dependencies form a cycle)", style="bold red"))
        parts.extend(render_task(task, expanded=expanded, facts=facts, mark=marks.get(task.id)) for task in tasks)
    for number, level in enumerate(levels or [], start=1):
        if number == 1:
            parts.append(Text(""))
        heading = Text(f"Level {number}", style="bold")
        if len(level) > 1:
            heading.append(f" · runs in parallel ({len(level)} tasks)", style="dim")
        parts.append(heading)
        parts.extend(
            render_task(by_id[task_id], expanded=expanded, facts=facts, mark=marks.get(task_id)) for task_id in level
        )
    if removed:
        parts.append(Text("removed: " + ", ".join(fold(task_id) for task_id in removed), style="bold red"))
    return Group(*parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def count_statuses(statuses: Iterable[TaskStatus]) -> str:
    """ "2 completed, 1 running": how many tasks are in each status, in status order."""
    counts = Counter(statuses)
    return ", ".join(f"{counts[status]} {status.value.lower()}" for status in TaskStatus if counts[status])
