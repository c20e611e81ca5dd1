"""`paicli eval report DIR...`: read the run records of one or more output folders (shards merged), write
report.md and report.html, and show the table on the terminal.

A line that cannot be read is a one-line warning naming the file and the line (on stderr, and listed at
the end of both reports); the rest is still reported. Exit 0 when a report was written, 2 when there was
nothing to report (no folder held a record) or the report could not be written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from paicli.common.atomic_write import write_path
from paicli.common.errors import EXIT_OK, EXIT_USAGE
from paicli.common.sanitize import one_line
from paicli.common.wording import counted
from paicli.eval import report_format as fmt
from paicli.eval.report_html import page
from paicli.eval.report_md import markdown
from paicli.eval.results_reader import RESULTS_NAME, read_results
from paicli.eval.summary import Summary, summarize

REPORT_MD, REPORT_HTML = "report.md", "report.html"


def default_out(dirs: list[Path]) -> Path:
    """Where the report goes without --out: the one folder given, or the current folder for several."""
    return dirs[0] if len(dirs) == 1 else Path(".")


def whole(figure: str) -> str:
    """A figure as one word, as the live view writes `0.1s`: a line breaks between figures, never inside."""
    return figure.replace(" ", "")


def terminal_tables(summary: Summary, console: Console) -> None:
    for suite, task_ids in summary.tasks.items():
        # Lines, not an 11-column table: they wrap at spaces at any width (report.md and .html have the table);
        # Text, not str: a name from the records is shown as it is, never read as rich markup
        console.print(Text(f"{one_line(suite, 80)} ({counted(len(task_ids), 'task')})", style="bold"))
        for group in (g for g in summary.groups if g.suite == suite):
            ratio, _, among = fmt.outcome_counts(group).partition(" ")  # `2/4 (1 timeout)`
            line = (
                f"{group.mode} · {one_line(group.model, 80)}: {ratio} passed{' ' + among if among else ''}, "
                f"{whole(fmt.percent(group.pass_rate))} (95% interval {whole(fmt.interval(group))}) · "
                f"{counted(group.runs, 'run')} of {counted(group.tasks, 'task')}, {counted(group.errors, 'error')}"
                f" · median per run: tokens {whole(fmt.tokens(group.median_tokens))}, cost "
                f"{whole(fmt.cost(group.median_cost))}, wall {whole(fmt.seconds(group.median_wall_s))}"
            )
            console.print(Padding(Text(line), (0, 0, 0, 2)))
        for paired in (p for p in summary.paired if p.suite == suite):
            console.print(
                f"plan ÷ chat, {one_line(paired.model, 80)}, on {paired.both_solved} tasks both solved: "
                f"tokens {fmt.times(paired.tokens)}, cost {fmt.times(paired.cost)}, wall {fmt.times(paired.wall_s)}",
                markup=False,
                highlight=False,
            )


def run_report(
    dirs: list[Path],
    out: Path | None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    errors = stderr or sys.stderr
    results = read_results(dirs)
    for problem in results.problems:
        print(f"paicli eval report: {problem}", file=errors)
    if not results.records:
        names = ", ".join(str(d / RESULTS_NAME) for d in dirs)
        print(f"paicli eval report: no run record in {one_line(names, 300)}: nothing to report", file=errors)
        return EXIT_USAGE
    summary = summarize(results.records)
    target = out if out is not None else default_out(dirs)
    try:
        target.mkdir(parents=True, exist_ok=True)
        write_path(target / REPORT_MD, markdown(summary, results.problems).encode("utf-8"))
        write_path(target / REPORT_HTML, page(summary, results.problems).encode("utf-8"))
    except OSError as err:
        print(
            f"paicli eval report: cannot write the report in {one_line(str(target), 200)}: {err.strerror}", file=errors
        )
        return EXIT_USAGE
    console = Console(file=stdout or sys.stdout, highlight=False)
    terminal_tables(summary, console)
    # soft_wrap: a path is shown whole, never broken inside a name
    console.print(
        f"wrote {one_line(str(target / REPORT_MD), 200)} and {REPORT_HTML}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_OK
