"""Which plan a command runs: a new one for a goal, a saved one to resume, or one written by hand.

A saved plan or a `--from` file is checked against the plan contract like a model's plan (paths inside
the workspace, actions allowed for their task's type, no overlapping parallel writers); a FILE_WRITE
task without `files` (a plan from before the contract) is accepted with a notice and ordered with the
other writers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paicli.common.errors import ConfigError
from paicli.plan.contract import Contract
from paicli.plan.model import Plan
from paicli.plan.parse_reply import joined
from paicli.plan.saved_plans import PlanStore, plan_from_file, prepare_resume
from paicli.tools.toolbox import builtin_tool


@dataclass(frozen=True)
class PlanRequest:
    goal: str | None  # None when `plan` is given
    plan: Plan | None = None  # a resumed or hand-written plan, ready to run
    plan_id: str | None = None  # a resumed plan keeps its id (and its files)
    notices: tuple[str, ...] = field(default=())  # what the user should know before it runs
    attached: str = ""  # what `@path` mentions in the goal attached: for the planner only
    allowed_tools: tuple[str, ...] | None = None  # a custom command's `allowed-tools`: the plan's only tools
    go: bool = False  # approved unasked, read-only tasks starting while it is planned (the REPL's /plan --go)


def plan_request(workspace: Path, goal: str | None, *, resume: str | None, from_file: str | None) -> PlanRequest:
    """What `paicli plan` was asked to run; ConfigError (exit 2) when it cannot be."""
    if resume:
        store = PlanStore(workspace)
        record = store.load(store.resolve(resume))
        return _checked(workspace, goal, prepare_resume(record.plan), record.id, f"the saved plan {record.id}")
    if from_file:
        return _checked(workspace, goal, plan_from_file(Path(from_file)), None, from_file)
    if not goal:
        raise ConfigError("paicli plan needs a GOAL (or --resume ID / --from FILE.json)")
    return PlanRequest(goal)


def saved_plan(workspace: Path, plan_id: str) -> PlanRequest:
    """The REPL's `/plan resume [ID]`: that saved plan (any unique beginning of its id), or the latest one
    that can be resumed."""
    store = PlanStore(workspace)
    record = store.load(store.resolve(plan_id)) if plan_id else store.latest_resumable()
    if record is None:
        raise ConfigError("no saved plan to resume (/plans lists them)")
    return _checked(workspace, None, prepare_resume(record.plan), record.id, f"the saved plan {record.id}")


def _checked(workspace: Path, goal: str | None, plan: Plan, plan_id: str | None, where: str) -> PlanRequest:
    # An MCP tool is known once its server runs: run_plan checks such an action again then.
    contract = Contract(workspace, builtin_tool, pending=lambda name: name.startswith("mcp__"))
    if problems := contract.problems(plan, require_files=False):
        raise ConfigError(f"{where} breaks the plan contract: {joined(problems)}")
    notices = contract.accept_legacy(plan)
    reused = [task.id for task in plan.tasks if task.from_saved]
    if reused:
        notices.append(
            f"reusing the results of {', '.join(reused)} from the saved plan (the file may say anything; "
            "resume in the REPL and press r in review to run a task again)"
        )
    return PlanRequest(goal, plan, plan_id, tuple(notices))
