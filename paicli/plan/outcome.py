"""How a plan ended, and what that means for the user: one message and one exit code.

Both front ends (the REPL and headless mode, through paicli.app) read the outcome of a plan from here;
nothing else maps a plan status to an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paicli.common.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from paicli.common.events import FileChange
from paicli.common.values import Usage
from paicli.plan.model import Plan, PlanStatus


@dataclass(frozen=True)
class PlanOutcome:
    status: PlanStatus  # COMPLETED, FAILED or CANCELLED
    plan: Plan | None = None  # None: the run stopped before a plan existed (planning failed or was cancelled)
    summary: str | None = None  # the final answer of a COMPLETED plan
    failure: str | None = None  # why it FAILED, one line for the user
    # The same without the task errors (the tasks that failed, by id), for a front end that showed each one as it
    # came (headless progress); None when the failure is not about tasks.
    failure_brief: str | None = None
    usage: Usage = field(default_factory=Usage)
    configuration: bool = False  # the failure is a usage or configuration problem (exit 2, not 1)
    saved_id: str | None = None  # the id it is saved under (what `/plan resume` takes); None: not saved
    changes: list[FileChange] | None = None  # the files it changed; None when checkpoints are off

    @classmethod
    def cancelled(
        cls, plan: Plan | None = None, saved_id: str | None = None, usage: Usage | None = None
    ) -> PlanOutcome:
        """Every request that reached the server counts, also in a plan that was cancelled (`usage`)."""
        return cls(PlanStatus.CANCELLED, plan, saved_id=saved_id, usage=usage or Usage())

    def exit_code(self) -> int:
        if self.status is PlanStatus.COMPLETED:
            return EXIT_OK
        if self.status is PlanStatus.CANCELLED:
            return EXIT_CANCELLED
        return EXIT_USAGE if self.configuration else EXIT_FAILED

    def message(self) -> str | None:
        """What to tell the user, or None when the plan completed."""
        if self.status is PlanStatus.COMPLETED:
            return None
        if self.status is PlanStatus.CANCELLED:
            return "plan cancelled"
        if self.plan is None:  # planning itself failed: the error says it all
            return self.failure or "planning failed"
        return f"plan failed: {self.failure or 'see the tasks above'}"

    def brief_message(self) -> str | None:
        """`message()` for a front end that showed each task's error as it came: the ids of the failed tasks."""
        if self.status is PlanStatus.FAILED and self.failure_brief:
            return f"plan failed: {self.failure_brief}"
        return self.message()
