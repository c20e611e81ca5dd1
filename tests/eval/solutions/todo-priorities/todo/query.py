"""Questions about a list of tasks."""

from todo.model import PRIORITIES


def open_tasks(tasks) -> list:
    return sorted((t for t in tasks if not t.done), key=lambda t: (PRIORITIES.index(t.priority), t.id))


def by_priority(tasks, priority) -> list:
    return sorted((t for t in tasks if t.priority == priority), key=lambda t: t.id)


def next_id(tasks) -> int:
    return max((t.id for t in tasks), default=0) + 1
