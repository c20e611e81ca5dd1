"""Runs `review_plan` on a real terminal, for the pexpect tests in test_review.py.

    python review_driver.py LOG_FILE

Reviews a three-task plan with a planner whose `amend` appends a task made from the supplement (and
records every supplement in LOG_FILE, one JSON string a line). The supplement "fail" makes amend raise
a PlanError; "slow" makes it wait a minute (to be cancelled with Esc). At the end one line is printed:
`RESULT <json>`, the approved plan's spec or null when the review was cancelled.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from rich.console import Console

from paicli.common.errors import PlanError
from paicli.plan.model import Plan, Task, TaskType
from paicli.ui.plan.review_screen import review_plan


def sample_plan() -> Plan:
    return Plan(
        goal="add a health endpoint",
        summary="read the app, add the endpoint, run the tests",
        tasks=[
            Task(id="task_1", description="Read src/app.py", type=TaskType.FILE_READ),
            Task(id="task_2", description="Add GET /health", type=TaskType.FILE_WRITE, dependencies=["task_1"]),
            Task(id="task_3", description="Run pytest -q", type=TaskType.COMMAND, dependencies=["task_2"]),
        ],
    )


class RecordingPlanner:
    def __init__(self, log: Path) -> None:
        self.log = log

    async def amend(self, plan: Plan, supplement: str) -> Plan:
        with self.log.open("a", encoding="utf-8") as file:
            file.write(json.dumps(supplement) + "\n")
        if supplement == "fail":
            raise PlanError("the planner's reply had no JSON")
        if supplement == "slow":
            await asyncio.sleep(60)
        amended = plan.model_copy(deep=True)
        number = len(amended.tasks) + 1
        amended.tasks.append(
            Task(
                id=f"task_{number}",
                description=supplement,
                type=TaskType.VERIFICATION,
                dependencies=[amended.tasks[-1].id],
            )
        )
        return amended


async def main(log: Path) -> None:
    console = Console()
    approved = await review_plan(sample_plan(), console=console, amend=RecordingPlanner(log))
    print("RESULT " + json.dumps(None if approved is None else approved.spec()), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
