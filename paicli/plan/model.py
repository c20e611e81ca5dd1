"""The plan data model: tasks, their statuses, and the plan that holds them.

A `Plan` keeps its tasks in the order the model gave them (that is the order shown to the user); the
order to run them in comes from `Plan.topological_order()`. Dependents are derived from the
dependencies when asked for, never stored, so they cannot drift apart.

After a replan, one `Plan` holds the tasks of every round: the finished ones of earlier rounds (kept
with their statuses and results, `Task.round` tells them apart) followed by the new PENDING ones. So
every task id in a plan names exactly one task for the whole run.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from paicli.common.events import ActionView, PlanView, TaskView
from paicli.common.kinds import PlanStatus as PlanStatus  # re-exported: the plan model is where callers look
from paicli.common.kinds import TaskStatus as TaskStatus
from paicli.common.kinds import TaskType as TaskType
from paicli.common.values import Usage
from paicli.plan import caps, dag
from paicli.tools.output import truncate_middle


class TaskAction(BaseModel):
    """One exact tool call that is the whole task: it runs through the gate without a model request."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


SAVED_MARK = "from the saved plan, not re-checked"  # on every result a resumed plan reuses, wherever it goes


class Task(BaseModel):
    id: str
    description: str
    type: TaskType = TaskType.ANALYSIS
    dependencies: list[str] = Field(default_factory=list)
    # The plan contract (paicli/plan/contract.py): the workspace paths it may create or change ("dir/"
    # covers a folder; None: not declared, so the whole workspace for a plan written before contracts),
    # and the one tool call it is, when it is one.
    files: list[str] | None = None
    action: TaskAction | None = None
    status: TaskStatus = TaskStatus.PENDING
    result: str | None = None
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    waited: float = 0.0  # seconds between started_at and finished_at spent waiting for the user's answers
    usage: Usage = Field(default_factory=Usage)
    requests: int = 0  # the model requests its latest run made (0: a direct action, or it has not run)
    round: int = 1  # the planning round that created this task
    from_saved: bool = False  # COMPLETED when its plan was resumed: the result comes from the saved file
    raw_result: bool = False  # the result is a tool's output as it came (a direct action), not a model's answer
    # A direct action's output is untrusted data: the line that marks it so wherever a model reads it (its
    # result, or its error's output), never shown to the user (paicli/tools/toolbox.py). "" when not marked.
    data_marker: str = ""
    started_early: bool = False  # started while the planner still wrote the plan (streamed planning, --early)

    @property
    def finished(self) -> bool:
        return self.status in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED)

    def shown_result(self, cap: int) -> str:
        """The result as the summarizer, reviewer and replanner see it: capped, and a direct action's raw tool
        output cut harder and marked, so a plan of direct reads does not pay for every file twice. A result
        reused from a saved plan says so (`SAVED_MARK`): the file may say anything."""
        text = self._result_text()
        mark = f"[{SAVED_MARK}]\n" if self.from_saved else ""
        if not text:
            return mark + "(no result text)"
        if self.raw_result and self.action is not None:
            shown = truncate_middle(text, min(cap, caps.RAW_RESULT_SHOWN))
            head = f"[the raw output of {self.action.tool}, run directly: {len(text):,} characters]"
            return f"{mark}{head}\n{self.data_marker}{shown}"
        return mark + truncate_middle(text, cap)

    def result_for_model(self, cap: int) -> str:
        """The result as a dependent task's brief carries it: capped, a direct action's output marked as data."""
        text = truncate_middle(self._result_text(), cap)
        if not text:
            return "(no result text)"
        return (self.data_marker if self.raw_result else "") + text

    def _result_text(self) -> str:
        """The result without blank lines around it (a tool's output keeps its first line's indent: `   1\t`)."""
        text = self.result or ""
        return text.strip("\n").rstrip() if self.raw_result and text.strip() else text.strip()

    def error_for_model(self, cap: int) -> str:
        """The error as the replanner and the summarizer read it: a failed direct action's output (what follows
        its first line, paicli's own) marked as data."""
        text = truncate_middle((self.error or "").strip(), cap)
        head, newline, output = text.partition("\n")
        return f"{head}\n{self.data_marker}{output}" if self.data_marker and newline else text

    def view(self) -> TaskView:
        return TaskView(
            id=self.id,
            description=self.description,
            type=self.type,
            dependencies=list(self.dependencies),
            status=self.status,
            files=list(self.files) if self.files is not None else None,
            action=ActionView(tool=self.action.tool, args=dict(self.action.args)) if self.action else None,
        )

    def spec(self) -> dict[str, Any]:
        """The task as the plan JSON shows it to a model (no run-time fields)."""
        spec: dict[str, Any] = {
            "id": self.id,
            "description": self.description,
            "type": self.type.value,
            "dependencies": list(self.dependencies),
        }
        if self.files is not None:
            spec["files"] = list(self.files)
        if self.action is not None:
            spec["action"] = {"tool": self.action.tool, "args": dict(self.action.args)}
        return spec


class Plan(BaseModel):
    goal: str
    summary: str = ""
    tasks: list[Task]
    status: PlanStatus = PlanStatus.CREATED
    round: int = 1

    def task(self, task_id: str) -> Task:
        """The task with this id; KeyError when there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def ids(self) -> list[str]:
        return [task.id for task in self.tasks]

    def graph(self) -> dict[str, list[str]]:
        """id → dependencies, in the plan's order: the input of every function in `paicli.plan.dag`."""
        return {task.id: list(task.dependencies) for task in self.tasks}

    def dependents(self, task_id: str) -> list[str]:
        """Ids of the tasks that depend directly on `task_id`, in plan order."""
        return [task.id for task in self.tasks if task_id in task.dependencies]

    def topological_order(self) -> list[str]:
        """Ids in an order that runs every dependency first; keeps the plan's order where it can."""
        return dag.topological_order(self.graph())

    def current(self) -> list[Task]:
        """The tasks of the latest round (all tasks before any replan)."""
        return [task for task in self.tasks if task.round == self.round]

    def view(self) -> PlanView:
        return PlanView(summary=self.summary, tasks=[task.view() for task in self.tasks])

    def spec(self, tasks: list[Task] | None = None) -> dict[str, Any]:
        """The plan JSON a model sees (contract shape), for these tasks (default: all)."""
        chosen = self.tasks if tasks is None else tasks
        return {"summary": self.summary, "tasks": [task.spec() for task in chosen]}
