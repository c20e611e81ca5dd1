"""What the planner sends and how it names tasks across rounds (paicli/plan/planner.py asks): the plan's
JSON schema and the `response_format` of each mode, the reply instruction, the re-ask after a rejected
reply, the replan request (completed results, failures, skips, the reviewer's feedback), the amend's list
of finished tasks, and the renaming of a new round's ids that are already taken.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from paicli.common.errors import PlanError
from paicli.llm.types import ChatResponse, Message
from paicli.plan import caps
from paicli.plan.model import SAVED_MARK, Plan, Task, TaskStatus, TaskType
from paicli.tools.output import truncate_middle

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "description": {"type": "string"},
                    "type": {"type": "string", "enum": [t.value for t in TaskType]},
                    "dependencies": {"type": "array", "items": {"type": "string"}},
                    "files": {"type": "array", "items": {"type": "string"}},
                    "action": {
                        "type": "object",
                        "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
                        "required": ["tool", "args"],
                    },
                },
                "required": ["id", "description", "type", "dependencies"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["summary", "tasks"],
    "additionalProperties": False,
}
RESPONSE_FORMATS: dict[str, dict[str, Any] | None] = {
    # Not strict: an action's `args` is a free-form object (each tool has its own), validated afterwards.
    "json_schema": {"type": "json_schema", "json_schema": {"name": "plan", "strict": False, "schema": PLAN_SCHEMA}},
    "json_object": {"type": "json_object"},
    "plain": None,
}
PLAN_SHAPE = (
    '{"summary": "…", "tasks": [{"id": "task_1", "description": "…", '
    '"type": "FILE_READ | FILE_WRITE | COMMAND | ANALYSIS | VERIFICATION", "dependencies": [], '
    '"files": ["paths a FILE_WRITE task may change"], "action": {"tool": "…", "args": {}}}]} '
    '("files" is required for FILE_WRITE; "action" only for a task that is exactly one tool call)'
)


# ---- messages --------------------------------------------------------------------------------------


def reply_instruction() -> str:
    return f"Reply with only the plan, as one JSON object in this json format:\n{PLAN_SHAPE}"


def reask_messages(response: ChatResponse, error: PlanError) -> list[Message]:
    messages: list[Message] = []
    if response.content.strip():
        messages.append({"role": "assistant", "content": truncate_middle(response.content, caps.REASK_EXCERPT)})
    messages.append(
        {
            "role": "user",
            "content": f"Your plan could not be used: {error}\n\nReply again with the complete, corrected "
            "plan: only the JSON object, nothing else.",
        }
    )
    return messages


def replan_request(plan: Plan, *, reason: str, feedback: str | None, repo_map: str = "") -> str:
    completed = [task for task in plan.tasks if task.status is TaskStatus.COMPLETED]
    current = plan.current()
    failed = [task for task in current if task.status is TaskStatus.FAILED]
    skipped = [task for task in current if task.status is TaskStatus.SKIPPED]
    parts = [f"# Goal\n\n{plan.goal.strip()}", *([repo_map] if repo_map else [])]
    parts.append(f"# Why a new plan is needed\n\n{reason.strip()}")
    share = max(300, min(caps.REPLAN_RESULT, caps.REPLAN_RESULTS_BUDGET // max(1, len(completed))))
    lines = ["# Completed tasks (their results can be passed to new tasks that depend on them)"]
    for task in completed:
        lines += ["", heading(task), "Result:", task.shown_result(share)]
    if not completed:
        lines += ["", "none"]
    parts.append("\n".join(lines))
    if failed:
        lines = ["# Failed tasks"]
        for task in failed:
            error = task.error_for_model(caps.REPLAN_ERROR) if task.error else "unknown error"
            lines += ["", heading(task), f"Error: {error}"]
        parts.append("\n".join(lines))
    if skipped:
        lines = ["# Skipped tasks (not run because a task they depend on did not complete)", ""]
        lines += [f"- {heading(task)[4:]}: {task.error or 'skipped'}" for task in skipped]
        parts.append("\n".join(lines))
    if feedback and feedback.strip():
        parts.append(f"# Reviewer feedback\n\n{feedback.strip()}")
    first_free = next_number({task.id for task in plan.tasks})
    parts.append(
        "Plan only the work that remains to reach the goal. Do not repeat completed work; a new task may "
        "list completed task ids in its dependencies to receive their results. Give new tasks new ids "
        f"(for example task_{first_free}, task_{first_free + 1}, …), never an id listed above. " + reply_instruction()
    )
    return "\n\n".join(parts)


def finished_section(tasks: list[Task]) -> str:
    lines = ["# Tasks already finished (they stay as they are; new tasks may depend on the completed ones)", ""]
    for task in tasks:
        description = truncate_middle(task.description, caps.REPLAN_DESCRIPTION)
        saved = f" ({SAVED_MARK})" if task.from_saved else ""
        lines.append(f"- {task.id} [{task.type.value}] {task.status.value}{saved}: {description}")
    return "\n".join(lines)


def heading(task: Task) -> str:
    dependencies = f" (after {', '.join(task.dependencies)})" if task.dependencies else ""
    return f"### {task.id} [{task.type.value}]{dependencies}: {task.description.strip()}"


def plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


# ---- ids across rounds -----------------------------------------------------------------------------


def completed_ids(tasks: list[Task]) -> set[str]:
    return {task.id for task in tasks if task.status is TaskStatus.COMPLETED}


def next_number(ids: Collection[str]) -> int:
    """One more than the largest trailing number of any id (task_7 → 8); 1 when none has one."""
    numbers = [int(match.group()) for task_id in ids if (match := re.search(r"\d+$", task_id))]
    return max(numbers, default=0) + 1


def renamed(tasks: list[Task], taken: set[str]) -> list[Task]:
    """`tasks` with every id in `taken` renamed to a fresh task_N; their dependents follow the rename.

    A dependency names a task of `tasks` when such a task exists (the new plan's own ids win over taken
    ones), so only those dependencies are rewritten; dependencies on other ids stay as they are.
    """
    clashing = [task.id for task in tasks if task.id in taken]
    if not clashing:
        return tasks
    number = next_number(taken | {task.id for task in tasks})
    renames: dict[str, str] = {}
    for task_id in clashing:
        renames[task_id] = f"task_{number}"
        number += 1
    return [
        task.model_copy(
            update={
                "id": renames.get(task.id, task.id),
                "dependencies": [renames.get(dep, dep) for dep in task.dependencies],
            }
        )
        for task in tasks
    ]
