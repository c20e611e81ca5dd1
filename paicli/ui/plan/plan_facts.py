"""What the review screen says about a plan beyond its tasks: each task's contract (the files it may
change, its direct action, its model) and the estimate of what running it will cost.

    ○ task_1 READ
      Read the entry point
      reads src/app.py · no model call
    ○ task_2 WRITE after task_1
      Add the flag
      may change src/app.py, tests/ · model deepseek-reasoner

    Estimate: 7 model requests · ~31k prompt tokens · ~$0.01

Pure functions (nothing prints); every model-written string goes through paicli/common/shown.py: whole,
every character visible, never cut.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from paicli.common.shown import inline, line_count, rows, size_note
from paicli.common.values import Estimate, Usage
from paicli.plan.model import Plan, Task
from paicli.tools.toolbox import builtin_tool

ACTION_VERBS = {
    "read_file": "reads",
    "list_dir": "lists",
    "glob_files": "finds",
    "grep_code": "searches for",
    "execute_command": "runs",
}
BLOCK_INDENT = 2  # a command's rows under its facts line


@dataclass(frozen=True)
class PlanFacts:
    """What the front end knows about plans beyond the plan itself; each part is optional."""

    problems: Callable[[Plan], list[str]] | None = None  # contract problems of an edited plan, [] if none
    estimate: Callable[[Plan], Estimate] | None = None  # what running its PENDING tasks will cost
    model_of: Callable[[Task], str | None] | None = None  # a task's model when it is not the session's
    cost: Callable[[Plan], float | None] | None = None  # the estimate's price, when prices are known
    # Ids of PENDING tasks whose commands are not held to their `files` (no sandbox): each runs alone
    # among the tasks that write.
    unheld: Callable[[Plan], list[str]] | None = None
    map_share: Callable[[], tuple[int, int] | None] | None = None  # (map, planner request) tokens, latest

    def latest_map(self) -> tuple[int, int] | None:
        return self.map_share() if self.map_share is not None else None


def action_text(task: Task) -> str | None:
    """A direct action in a few words (`runs 'pytest -q'` with backticks, `reads src/a.py`), None without one.

    Whole and on one line, through paicli/common/shown.py as the approval question shows it: a line break
    shows as ⏎, a long run of spaces as its count, and a command of several lines says how many, so no
    line hides behind a comment on the one before it; a tool paicli does not know (MCP) shows all its
    arguments."""
    if task.action is None:
        return None
    tool = builtin_tool(task.action.tool)
    if tool is None:
        arguments = json.dumps(task.action.args, ensure_ascii=False) if task.action.args else ""
        return f"calls {inline(task.action.tool)}" + (f" {inline(arguments)}" if arguments else "")
    if (command := action_command(task)) is not None:
        return f"runs `{inline(command)}`" + (f" ({size_note(command)})" if line_count(command) > 1 else "")
    what = inline(tool.summary(task.action.args))
    verb = ACTION_VERBS.get(task.action.tool, "calls " + inline(task.action.tool))
    return f"{verb} {what}" if what else verb


def action_command(task: Task) -> str | None:
    """The command of a direct `execute_command` action, as written (None for any other task)."""
    if task.action is None or task.action.tool != "execute_command":
        return None
    command = task.action.args.get("command")
    return command if isinstance(command, str) else None


def files_text(task: Task) -> str | None:
    """The whole write set, every path made visible on one line (paicli/common/shown.py): never cut."""
    if task.files is None:
        return None
    if not task.files:
        return "changes no file"
    return "may change " + ", ".join(inline(path) for path in task.files)


def task_facts(task: Task, model: str | None = None, *, expanded: bool = False, width: int = 100) -> Text | None:
    """The line under a task's description: its write set, its action (no model call) or its model.

    Expanded (Ctrl+O), a command of several lines is shown below it as the approval question shows one
    (paicli/common/shown.py `rows`): numbered lines, ⏎ at each end, long ones wrapped at `width` with ↪."""
    parts: list[tuple[str, str]] = []
    block: list[str] = []
    if (written := files_text(task)) is not None:
        parts.append((written, "magenta"))
    if (action := action_text(task)) is not None:
        command = action_command(task)
        if expanded and command is not None and line_count(command) > 1:
            parts.append((f"runs these {size_note(command)}", "cyan"))
            block = rows(command, max(20, width - BLOCK_INDENT))
        else:
            parts.append((action, "cyan"))
        parts.append(("no model call", "green"))
    elif model:
        parts.append((f"model {inline(model)}", "blue"))
    if not parts:
        return None
    line = Text(no_wrap=False)
    for number, (text, style) in enumerate(parts):
        if number:
            line.append(" · ", style="dim")
        line.append(text, style=style)
    for row in block:
        line.append("\n" + " " * BLOCK_INDENT)
        line.append(row, style="cyan")
    return line


def tokens_text(tokens: int) -> str:
    """`~850`, `~31k`, `~1.2M` (an estimate is never exact)."""
    if tokens >= 1_000_000:
        return f"~{tokens / 1_000_000:.1f}M"
    if tokens >= 10_000:
        return f"~{round(tokens / 1_000)}k"
    if tokens >= 1_000:
        return f"~{tokens / 1_000:.1f}k"
    return f"~{tokens}"


def price_text(cost: float) -> str:
    return f"~${cost:.2f}" if cost >= 0.01 else "<$0.01"


def _requests(count: int) -> str:
    return f"{count} model request" + ("" if count == 1 else "s")


def estimate_line(estimate: Estimate, cost: float | None = None, map_share: tuple[int, int] | None = None) -> Text:
    """`Estimate: 7 model requests · ~31k prompt tokens · ~$0.01` above the plan under review, and
    `Planned with a repository map of ~2.9k of the request's ~4.1k tokens (71%)` under it when known (no
    space in `71%`: a wrapped line never leaves the `%` alone on the next row). The range says how sure the
    estimate is, and whether this server's runs calibrated it yet."""
    line = Text("Estimate: ", style="bold")
    line.append(f"{_requests(estimate.requests)} · {tokens_text(estimate.prompt_tokens)} prompt tokens")
    if cost is not None:
        line.append(f" · {price_text(cost)}")
    if estimate.prompt_tokens_high:
        line.append(f" ({token_range(estimate)} tokens", style="dim")
        line.append("; not calibrated for this server yet)" if estimate.uncalibrated else ")", style="dim")
    if map_share is not None and map_share[1] > 0:
        shown, whole = map_share
        line.append(f"\nPlanned with a repository map of {tokens_text(shown)} of the request's {tokens_text(whole)}")
        line.append(f" tokens ({100 * shown // whole}%)", style="dim")
    return line


def token_range(estimate: Estimate) -> str:
    """`~20k–45k`: where the prompt tokens are expected (paicli/plan/calibration.py)."""
    return f"{tokens_text(estimate.prompt_tokens_low)}–{tokens_text(estimate.prompt_tokens_high).lstrip('~')}"


def estimate_vs_actual(estimate: Estimate, requests: int | None, usage: Usage) -> str:
    """`Used 6 model requests · 28,410 prompt tokens (estimated 7 · ~31k)` after the run."""
    used = f"{_requests(requests)} · " if requests is not None else ""
    return (
        f"Used {used}{usage.prompt_tokens:,} prompt tokens "
        f"(estimated {estimate.requests} · {tokens_text(estimate.prompt_tokens)}"
        + (f", {token_range(estimate)})" if estimate.prompt_tokens_high else ")")
    )
