import pytest

from todo.model import Task
from todo.query import next_id, open_tasks
from todo.store import load, save


def test_round_trip(tmp_path):
    tasks = [Task(2, "write"), Task(1, "read", done=True)]
    save(tasks, tmp_path / "todo.json")
    assert load(tmp_path / "todo.json") == tasks
    assert load(tmp_path / "missing.json") == []


def test_queries():
    tasks = [Task(3, "c"), Task(1, "a"), Task(2, "b", done=True)]
    assert [t.id for t in open_tasks(tasks)] == [1, 3]
    assert next_id(tasks) == 4 and next_id([]) == 1


def test_title_required():
    with pytest.raises(ValueError):
        Task(1, "  ")
