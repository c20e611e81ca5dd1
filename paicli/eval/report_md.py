"""The report as Markdown (report.md): a section per suite, a table per mode × model, and plan ÷ chat."""

from __future__ import annotations

from collections.abc import Iterable

from paicli.common.sanitize import one_line
from paicli.eval import report_format as fmt
from paicli.eval.summary import Summary


def cell(text: str) -> str:
    """Untrusted text made safe for a Markdown table cell: one line, no pipe, no markup."""
    flat = one_line(text, 200)
    for char in "\\`*_[]<>|#":
        flat = flat.replace(char, "\\" + char)
    return flat


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines


def markdown(summary: Summary, problems: list[str]) -> str:
    lines = ["# paicli eval report", ""]
    lines.append(
        f"{summary.runs} runs. Pass rates leave out `error` runs (the task could not be started fairly); "
        "timeouts and runs over the token limit count as failures. Medians are over the counted runs."
    )
    for suite, task_ids in summary.tasks.items():
        lines += ["", f"## Suite {cell(suite)} ({len(task_ids)} tasks)", ""]
        lines += table(fmt.GROUP_COLUMNS, (fmt.group_row(g) for g in summary.groups if g.suite == suite))
        paired = [p for p in summary.paired if p.suite == suite]
        if paired:
            lines += ["", "### plan ÷ chat on the tasks both solved", ""]
            lines.append(
                "The median of the per-task ratios (plan's value ÷ chat's); below 1 means plan mode spent less."
            )
            lines.append("")
            rows = [
                (p.model, str(p.both_solved), fmt.times(p.tokens), fmt.times(p.cost), fmt.times(p.wall_s))
                for p in paired
            ]
            lines += table(fmt.PAIRED_COLUMNS, rows)
    if problems:
        lines += ["", "## Lines that were not read", ""]
        lines += [f"    {one_line(problem, 400)}" for problem in problems]  # an indented code block: read as is
    return "\n".join(lines) + "\n"
