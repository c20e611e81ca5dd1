"""Questions about a list of tasks."""


def open_tasks(tasks) -> list:
    return sorted((t for t in tasks if not t.done), key=lambda t: t.id)


def next_id(tasks) -> int:
    return max((t.id for t in tasks), default=0) + 1
