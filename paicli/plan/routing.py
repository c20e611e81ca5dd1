"""Which model each request of a plan names: one place for the precedence of the model settings.

- a task: its type's model (`[models] ANALYSIS = "..."`), else `executor_model`, else the session model
  (`model`, which `--model` sets and the REPL's `/model` switches);
- planning and replanning: `planner_model`, else the session model;
- the final answer: `summarizer_model`, else the session model;
- the reviewer: `reviewer_model`, else the session model.
"""

from __future__ import annotations

from paicli.config import Settings
from paicli.plan.model import TaskType


def model_for_task(settings: Settings, task_type: TaskType | str) -> str:
    """The model a task of `task_type` runs on (a string type is read as the planner's are)."""
    kind = TaskType.lenient(task_type)
    return settings.models.get(kind.value) or settings.executor_model or settings.model


def model_for_planner(settings: Settings) -> str:
    return settings.planner_model or settings.model


def model_for_summarizer(settings: Settings) -> str:
    return settings.summarizer_model or settings.model


def model_for_reviewer(settings: Settings) -> str:
    return settings.reviewer_model or settings.model
