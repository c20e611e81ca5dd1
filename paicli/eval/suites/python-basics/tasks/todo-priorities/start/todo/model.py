"""A to-do item."""

from dataclasses import dataclass


@dataclass
class Task:
    id: int
    title: str
    done: bool = False

    def __post_init__(self):
        if not self.title.strip():
            raise ValueError("a task needs a title")
