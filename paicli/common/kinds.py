"""The kinds and states of tasks and plans: the enums every layer shares (events carry them, the plan
model and the front ends use them). The lowest layer: imports nothing of paicli."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINAL_PLAN_STATUSES", "FINISHED_TASK_STATUSES", "PlanStatus", "TaskStatus", "TaskType"]


class TaskType(StrEnum):
    FILE_READ = "FILE_READ"
    FILE_WRITE = "FILE_WRITE"
    COMMAND = "COMMAND"
    ANALYSIS = "ANALYSIS"
    VERIFICATION = "VERIFICATION"

    @classmethod
    def lenient(cls, value: object) -> TaskType:
        """The type a model meant: case-insensitive, `-` or space for `_`; anything unknown is ANALYSIS."""
        if isinstance(value, str):
            key = value.strip().upper().replace("-", "_").replace(" ", "_")
            if key in cls.__members__:
                return cls[key]
        return cls.ANALYSIS


class TaskStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


class PlanStatus(StrEnum):
    CREATED = "CREATED"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


FINISHED_TASK_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED})
FINAL_PLAN_STATUSES = frozenset({PlanStatus.COMPLETED, PlanStatus.FAILED, PlanStatus.CANCELLED})
