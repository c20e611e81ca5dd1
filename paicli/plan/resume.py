"""Resuming a saved plan. The file is someone else's text until checked (a cloned repository may ship
`.paicli/plans/*.json`), so a loaded plan is validated like a new one before anything runs.

`prepare_resume` refuses (ConfigError, one line):
- a COMPLETED plan (nothing to resume), an empty plan, a blank goal, more than `MAX_FILE_TASKS` tasks;
- blank, duplicate or over-long task ids, empty descriptions, rounds outside 1…plan.round, a latest
  round without tasks;
- dependencies on ids that are not in the plan, self-dependencies, cycles (`dag.validate`).

Then it resets what must run again:
- every task of the latest round that is not COMPLETED becomes PENDING (result, error, times cleared);
- a task of an earlier round left PENDING or RUNNING (a real run never leaves one: a replan marks them
  SKIPPED) becomes SKIPPED, so nothing waits on it forever; FAILED and SKIPPED tasks of earlier rounds
  stay as history (a replan superseded them);
- every COMPLETED task keeps its result and is marked `from_saved`: the review screen says its result is
  "completed earlier, from the saved plan" and `r` there runs it again (`rerun`).
"""

from __future__ import annotations

from collections import Counter

from paicli.common.errors import ConfigError
from paicli.plan import dag
from paicli.plan.model import Plan, PlanStatus, TaskStatus
from paicli.plan.parse_reply import MAX_ID_CHARS

MAX_FILE_TASKS = 10_000  # a plan written by hand may be larger than one a model may propose
_MAX_REPORTED = 4


def prepare_resume(plan: Plan) -> Plan:
    """The plan made ready to run again; ConfigError when it cannot be resumed."""
    if plan.status is PlanStatus.COMPLETED:
        raise ConfigError("that plan is already COMPLETED; nothing to resume")
    problems = resume_problems(plan)
    if problems:
        more = len(problems) - _MAX_REPORTED
        shown = "; ".join(problems[:_MAX_REPORTED]) + (f"; and {more} more problems" if more > 0 else "")
        raise ConfigError(f"the saved plan cannot be resumed: {shown}")
    for task in plan.tasks:
        task.from_saved = task.status is TaskStatus.COMPLETED
        if task.status is TaskStatus.COMPLETED:
            continue
        if task.round == plan.round:
            task.status = TaskStatus.PENDING
            task.result = task.error = None
            task.started_at = task.finished_at = None
        elif not task.finished:
            task.status = TaskStatus.SKIPPED
            task.error = "left unfinished in an earlier round of the saved plan"
    plan.status = PlanStatus.CREATED
    return plan


def resume_problems(plan: Plan) -> list[str]:
    """Everything that makes the plan unusable, one line each; [] when it can run."""
    if not plan.tasks:
        return ["it has no tasks"]
    if len(plan.tasks) > MAX_FILE_TASKS:
        return [f"it has {len(plan.tasks):,} tasks, more than the limit of {MAX_FILE_TASKS:,}"]
    problems: list[str] = []
    if not plan.goal.strip():
        problems.append("it has no goal")
    if plan.round < 1:
        problems.append(f"its round is {plan.round}")
    for number, task in enumerate(plan.tasks, start=1):
        if not task.id.strip():
            problems.append(f"task #{number} has a blank id")
        elif len(task.id) > MAX_ID_CHARS:
            problems.append(f"task #{number} has an id of {len(task.id):,} characters (at most {MAX_ID_CHARS})")
        elif not task.description.strip():
            problems.append(f'task "{task.id}" has an empty description')
        if not 1 <= task.round <= plan.round:
            problems.append(f'task "{dag.shown_id(task.id)}" is of round {task.round}, the plan of round {plan.round}')
    problems.extend(
        f'task id "{dag.shown_id(task_id)}" is used by {count} tasks'
        for task_id, count in Counter(plan.ids()).items()
        if count > 1
    )
    if not any(task.round == plan.round for task in plan.tasks):
        problems.append(f"its latest round ({plan.round}) has no tasks")
    if problems:
        return problems
    return dag.validate(plan.graph())


def rerun(plan: Plan, task_id: str) -> tuple[Plan, list[str]]:
    """A copy of `plan` in which the COMPLETED task `task_id` runs again, with every COMPLETED task that
    depends on it, directly or not (their results were built on the old one); nothing else changes.
    The tasks reset join the latest round (so a failure of theirs is seen like any other). Returns the
    copy and the ids reset, in plan order; KeyError for an unknown id, ValueError if it is not COMPLETED.
    """
    if plan.task(task_id).status is not TaskStatus.COMPLETED:
        raise ValueError(f"{task_id} is {plan.task(task_id).status.value}, not COMPLETED")
    copy = plan.model_copy(deep=True)
    chosen = {task_id} | set(dag.transitive_dependents(copy.graph(), task_id))
    reset: list[str] = []
    for task in copy.tasks:
        if task.id in chosen and task.status is TaskStatus.COMPLETED:
            task.status = TaskStatus.PENDING
            task.result = task.error = None
            task.started_at = task.finished_at = None
            task.from_saved = False
            task.round = copy.round
            reset.append(task.id)
    return copy, reset
