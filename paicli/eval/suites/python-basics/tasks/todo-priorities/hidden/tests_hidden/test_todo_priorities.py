import json

import pytest

from todo.model import Task
from todo.query import by_priority, open_tasks
from todo.store import load, save


def test_default_and_validation():
    assert Task(1, "a").priority == "normal"
    assert Task(1, "a", priority="high").priority == "high"
    with pytest.raises(ValueError):
        Task(1, "a", priority="urgent")


def test_store_keeps_priority(tmp_path):
    tasks = [Task(1, "a", priority="low"), Task(2, "b", priority="high", done=True)]
    save(tasks, tmp_path / "t.json")
    assert load(tmp_path / "t.json") == tasks
    assert json.loads((tmp_path / "t.json").read_text())[0]["priority"] == "low"


def test_old_files_load_as_normal(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps([{"id": 1, "title": "x", "done": False}]))
    assert load(tmp_path / "old.json") == [Task(1, "x")]


def test_unknown_priority_in_a_file_names_the_task(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps([{"id": 7, "title": "x", "done": False, "priority": "asap"}]))
    with pytest.raises(ValueError, match="7"):
        load(tmp_path / "bad.json")


def test_ordering_and_filter():
    tasks = [Task(1, "a"), Task(2, "b", priority="high"), Task(3, "c", priority="low"),
             Task(4, "d", priority="high"), Task(5, "e", priority="high", done=True)]
    assert [t.id for t in open_tasks(tasks)] == [2, 4, 1, 3]
    assert [t.id for t in by_priority(tasks, "high")] == [2, 4, 5]
    assert by_priority(tasks, "normal") == [tasks[0]]
