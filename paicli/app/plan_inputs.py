"""Which plan a command runs: a new one for a goal, a saved one to resume, or one written by hand."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paicli.errors import ConfigError
from paicli.plan.model import Plan
from paicli.plan.store import PlanStore, plan_from_file, prepare_resume


@dataclass(frozen=True)
class PlanRequest:
    goal: str | None  # None when `plan` is given
    plan: Plan | None = None  # a resumed or hand-written plan, ready to run
    plan_id: str | None = None  # a resumed plan keeps its id (and its files)

    def notices(self) -> list[str]:
        """What the user should know before it runs: results reused from a saved file."""
        reused = [task.id for task in self.plan.tasks if task.from_saved] if self.plan is not None else []
        if not reused:
            return []
        return [f"reusing the results of {', '.join(reused)} from the saved plan (the file may say anything; "
                "resume in the REPL and press r in review to run a task again)"]  # fmt: skip


def plan_request(workspace: Path, goal: str | None, *, resume: str | None, from_file: str | None) -> PlanRequest:
    """What `paicli plan` was asked to run; ConfigError (exit 2) when it cannot be."""
    if resume:
        record = PlanStore(workspace).load(resume)
        return PlanRequest(goal, prepare_resume(record.plan), record.id)
    if from_file:
        return PlanRequest(goal, plan_from_file(Path(from_file)))
    if not goal:
        raise ConfigError("paicli plan needs a GOAL (or --resume ID / --from FILE.json)")
    return PlanRequest(goal)


def saved_plan(workspace: Path, plan_id: str) -> PlanRequest:
    """The REPL's `/plan resume [ID]`: that saved plan, or the latest one that can be resumed."""
    store = PlanStore(workspace)
    record = store.load(plan_id) if plan_id else store.latest_resumable()
    if record is None:
        raise ConfigError("no saved plan to resume (/plans lists them)")
    return PlanRequest(None, prepare_resume(record.plan), record.id)
