"""A to-do item."""

from dataclasses import dataclass

PRIORITIES = ("high", "normal", "low")


@dataclass
class Task:
    id: int
    title: str
    done: bool = False
    priority: str = "normal"

    def __post_init__(self):
        if not self.title.strip():
            raise ValueError("a task needs a title")
        if self.priority not in PRIORITIES:
            raise ValueError(f"task {self.id}: unknown priority {self.priority!r}")
