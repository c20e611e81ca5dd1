"""A plan's steps: a task starting right after another ended (nothing open between) takes the checkpoint
that one just took as its own "before" instead of a new one; anything older, or with a step still open,
gets a checkpoint of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.app.checkpoints import recording as recording_module
from paicli.app.checkpoints.store import CheckpointStore
from tests.app.checkpoints.conftest import recording, tool_write


def counted(store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    labels: list[str] = []
    take = store.snapshot

    def snapshot(label: str) -> str:
        labels.append(label)
        return take(label)

    monkeypatch.setattr(store, "snapshot", snapshot)
    return labels


def test_a_task_starting_as_the_last_one_ended_reuses_its_checkpoint(
    store: CheckpointStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = counted(store, monkeypatch)
    rec = recording(store, "plan", "p1")
    for task, path in (("task_1", "a.py"), ("task_2", "b.py")):
        rec.begin_step(task)
        tool_write(rec, task, path, f"{task}\n")
        rec.end_step(task)
    rec.finish()
    first, second = rec.entry.steps
    assert second.before == first.after
    assert taken == ["before task_1", "after task_1", "after task_2"]
    assert {c.path: c.task_id for c in rec.changes() or []} == {"a.py": "task_1", "b.py": "task_2"}


def test_an_older_checkpoint_is_not_reused_so_an_edit_meanwhile_is_nobodys(
    store: CheckpointStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording_module, "REUSE_SECONDS", -1.0)  # as if the user took a while (a replan)
    rec = recording(store, "plan", "p1")
    rec.begin_step("task_1")
    tool_write(rec, "task_1", "a.py", "one\n")
    rec.end_step("task_1")
    (workspace / "notes.txt").write_text("the user's\n")
    rec.begin_step("task_2")
    tool_write(rec, "task_2", "b.py", "two\n")
    rec.end_step("task_2")
    rec.finish()
    first, second = rec.entry.steps
    assert second.before != first.after
    assert "notes.txt" not in second.window
    assert {c.path for c in rec.changes() or []} == {"a.py", "b.py"}


def test_a_step_still_open_when_another_ends_means_a_fresh_checkpoint(
    store: CheckpointStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = counted(store, monkeypatch)
    rec = recording(store, "plan", "p1")
    rec.begin_step("task_1")
    rec.begin_step("task_2")  # running beside it
    tool_write(rec, "task_1", "a.py", "one\n")
    rec.end_step("task_1")  # task_2 may still write: this "after" is no "before" for anyone
    rec.begin_step("task_3")
    tool_write(rec, "task_2", "b.py", "two\n")
    rec.end_step("task_2")
    rec.end_step("task_3")
    rec.finish()
    assert taken.count("before task_3") == 1
    assert {c.path: c.task_id for c in rec.changes() or []} == {"a.py": "task_1", "b.py": "task_2"}
