"""Saving tasks to a JSON file and loading them back."""

import json
from pathlib import Path

from todo.model import Task


def save(tasks, path: Path) -> None:
    data = [{"id": t.id, "title": t.title, "done": t.done} for t in tasks]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def load(path: Path) -> list:
    if not path.exists():
        return []
    return [Task(id=d["id"], title=d["title"], done=d["done"]) for d in json.loads(path.read_text(encoding="utf-8"))]
