"""`/plans` as an aligned table and `/plan resume` by a beginning of an id, through a small context."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from paicli.app.plan_inputs import PlanRequest
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.saved_plans import PlanRecord, PlanStore, render_markdown
from paicli.ui.commands.plan_command import age, list_plans, resume_plan


class Context:
    """What the handlers use of the REPL: the workspace, output, and running a plan."""

    def __init__(self, workspace: Path, width: int = 100) -> None:
        self.workspace = workspace
        self.out = io.StringIO()
        self.console = Console(file=self.out, width=width, color_system=None)
        self.ran: list[PlanRequest] = []

    def say(self, text: str, style: str = "") -> None:
        self.console.print(text)

    def error(self, text: str) -> None:
        self.console.print(f"error: {text}")

    def show(self, renderable: Any) -> None:
        self.console.print(renderable)

    async def run_plan(self, request: PlanRequest) -> None:
        self.ran.append(request)


def save(store: PlanStore, plan_id: str, goal: str, status: PlanStatus, done: int, updated: float) -> None:
    tasks = [
        Task(id=f"t{n}", description="x", status=TaskStatus.COMPLETED if n < done else TaskStatus.PENDING)
        for n in range(3)
    ]
    plan = Plan(goal=goal, tasks=tasks, status=status)
    record = PlanRecord(id=plan_id, created_at=updated, updated_at=updated, plan=plan)
    store.write(plan_id, record.model_dump_json(), render_markdown(record))


async def test_plans_are_an_aligned_table_newest_first(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    now = time.time()
    save(store, "20261201-090000-old", "fix the \x1b[31mbuild", PlanStatus.FAILED, 1, now - 3 * 3600)
    time.sleep(0.01)  # the listing orders by the files' own modification time
    save(store, "20261201-120000-new", "add a flag " * 20, PlanStatus.CANCELLED, 2, now - 90)
    ctx = Context(tmp_path)
    await list_plans(ctx, "")  # type: ignore[arg-type]
    lines = ctx.out.getvalue().splitlines()
    assert lines[0].split() == ["id", "age", "status", "done", "goal"]
    new = next(number for number, line in enumerate(lines) if "-new" in line)
    old = next(number for number, line in enumerate(lines) if "-old" in line)
    assert new < old
    assert lines[new].index("CANCELLED") == lines[old].index("FAILED")  # one column
    assert " 1m " in lines[new] and " 3h " in lines[old] and "2/3" in lines[new] and "1/3" in lines[old]
    assert "\x1b" not in ctx.out.getvalue()


async def test_resume_takes_a_unique_beginning_and_names_the_plan(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    save(store, "20261201-120000-add-flag", "add a flag", PlanStatus.CANCELLED, 1, time.time())
    ctx = Context(tmp_path)
    await resume_plan(ctx, "20261201-12")  # type: ignore[arg-type]
    assert "resuming 20261201-120000-add-flag: add a flag" in ctx.out.getvalue()
    assert [r.plan_id for r in ctx.ran] == ["20261201-120000-add-flag"]
    await resume_plan(ctx, "2099")  # type: ignore[arg-type]
    assert "error: no saved plan '2099'" in ctx.out.getvalue() and len(ctx.ran) == 1


def test_ages_use_the_largest_unit() -> None:
    assert [age(s) for s in (5, 125, 7_300, 3 * 86_400, -4)] == ["5s", "2m", "2h", "3d", "0s"]
    assert json.dumps(age(60)) == '"1m"'


async def test_on_a_narrow_screen_each_plan_keeps_its_whole_id_and_its_goal(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    long_id = "20261201-101010-add-a-feature-flag-to-the-cli"
    save(
        store,
        long_id,
        "add a feature flag to the command line so users can choose",
        PlanStatus.CANCELLED,
        1,
        time.time() - 300,
    )
    ctx = Context(tmp_path, width=40)
    await list_plans(ctx, "")  # type: ignore[arg-type]
    shown = ctx.out.getvalue()
    assert all(len(line) <= 40 for line in shown.splitlines())
    assert long_id in shown.replace("\n", "")  # folded at the edge, never cut short
    words = shown.split()
    assert "CANCELLED" in words and "1/3" in words and "choose" in words


async def test_plan_go_runs_the_goal_unreviewed_with_early_start(tmp_path: Path) -> None:
    from paicli.ui.commands.plan_command import plan_slash

    ctx = Context(tmp_path)
    await plan_slash(ctx, "--go add a --verbose flag")  # type: ignore[arg-type]
    await plan_slash(ctx, "add a --go flag")  # type: ignore[arg-type]
    assert [(r.goal, r.go) for r in ctx.ran] == [("add a --verbose flag", True), ("add a --go flag", False)]
    await plan_slash(ctx, "--go")  # type: ignore[arg-type]
    assert "error: /plan --go needs a GOAL" in ctx.out.getvalue() and len(ctx.ran) == 2
