"""The checkpoints service: the warm-up that takes a workspace's first (expensive) checkpoint in the
background, while the user types or the planner thinks, so that the first step only stores what changed."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from paicli.app.checkpoints.service import Checkpoints
from paicli.app.checkpoints.store import CheckpointStore, store_folder
from paicli.common.events import AnyEvent, Notice
from tests.app.checkpoints.conftest import GIT


class Sink:
    def __init__(self) -> None:
        self.events: list[AnyEvent] = []

    def emit(self, event: AnyEvent) -> None:
        self.events.append(event)

    def notices(self) -> list[str]:
        return [event.message for event in self.events if isinstance(event, Notice)]


def shadow_files(store: CheckpointStore) -> list[str]:
    """What the shadow index holds (what the next checkpoint compares the workspace with)."""
    return store.git.run(["ls-files"]).decode().splitlines()


def make_store(workspace: Path, home: Path, **options: int) -> CheckpointStore:
    return CheckpointStore(GIT, workspace, store_folder(home, workspace), notify=lambda message: None, **options)


def test_the_warm_up_stores_the_workspace_before_any_turn(workspace: Path, home: Path) -> None:
    for n in range(120):
        (workspace / f"m{n}.py").write_text(f"x = {n}\n")
    store = make_store(workspace, home)
    checkpoints = Checkpoints(store, Sink())
    checkpoints.warm_up()
    checkpoints.warm_up()  # once per process
    asyncio.run(checkpoints.call(lambda: None))  # the worker's next operation: after the warm-up
    checkpoints.close()
    assert len(shadow_files(store)) == 120  # the shadow index knows every file: the next checkpoint is cheap


def test_leaving_does_not_wait_for_a_warm_up_still_storing_files(workspace: Path, home: Path) -> None:
    """The session's end gives the warm-up up (a first checkpoint of a large workspace takes seconds):
    fast-import is stopped, nothing half stored is used, and the next session's checkpoint is whole."""
    for folder in range(40):
        for n in range(100):
            path = workspace / f"d{folder}" / f"m{n}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"x = {n}\n")
    store = make_store(workspace, home)
    checkpoints = Checkpoints(store, Sink())
    checkpoints.warm_up()
    checkpoints.close()
    assert len(shadow_files(store)) < 4_000  # given up part way
    again = make_store(workspace, home)
    with again.lock.held():
        again.ensure()
        again.snapshot("the next session's first")
    assert len(shadow_files(again)) == 4_000


def test_a_turn_after_the_warm_up_records_its_changes_as_without_it(workspace: Path, home: Path) -> None:
    (workspace / "app.py").write_text("old\n")
    checkpoints = Checkpoints(make_store(workspace, home), Sink())
    checkpoints.warm_up()

    async def turn() -> list[str]:
        recording = await checkpoints.begin_turn("change app.py")
        for path, text in (("app.py", "new\n"), ("added.py", "1\n")):  # as write_file does: told, then written
            await checkpoints.call(recording.note_write, None, path)
            (workspace / path).write_text(text)
        changes = await checkpoints.finish(recording)
        return sorted(f"{c.status} {c.path}" for c in changes or [])

    try:
        assert asyncio.run(turn()) == ["created added.py", "modified app.py"]
    finally:
        checkpoints.close()


def test_a_notice_of_the_warm_up_waits_for_the_next_operation_and_is_told_once(workspace: Path, home: Path) -> None:
    (workspace / "big.log").write_bytes(b"x" * 5000)
    sink = Sink()
    checkpoints = Checkpoints(make_store(workspace, home, max_file_bytes=1000), sink)
    checkpoints.warm_up()
    assert checkpoints._warming is not None
    checkpoints._warming.result(timeout=60)
    assert sink.notices() == []  # not in the middle of whatever the screen shows (the prompt)

    async def turn() -> None:
        await checkpoints.finish(await checkpoints.begin_turn("go"))

    try:
        asyncio.run(turn())
    finally:
        checkpoints.close()
    (notice,) = sink.notices()
    assert notice.startswith("checkpoints leave out big.log (0.0 MB, over the 0.001 MB limit)")


def test_a_failing_warm_up_is_silent_and_leaves_the_telling_to_the_real_checkpoint(workspace: Path, home: Path) -> None:
    folder = store_folder(home, workspace)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder")  # the store cannot be created
    sink = Sink()
    checkpoints = Checkpoints(make_store(workspace, home), sink)
    checkpoints.warm_up()
    assert checkpoints._warming is not None
    assert checkpoints._warming.result(timeout=60) is None  # no exception escaped
    checkpoints.close()
    assert sink.notices() == []


def test_a_workspace_too_large_for_the_warm_up_is_told_once_at_the_first_turn(workspace: Path, home: Path) -> None:
    for n in range(30):
        (workspace / f"f{n}.txt").write_text("x\n")
    sink = Sink()
    checkpoints = Checkpoints(make_store(workspace, home, max_new_files=20), sink)
    checkpoints.warm_up()

    async def turns() -> list[object]:
        outcomes = []
        for _ in range(2):
            outcomes.append(await checkpoints.finish(await checkpoints.begin_turn("go")))
        return outcomes

    try:
        assert asyncio.run(turns()) == [None, None]  # no changes known: checkpoints are off
    finally:
        checkpoints.close()
    (notice,) = sink.notices()
    assert notice.startswith("checkpoints are off: the workspace has 30 files not yet checkpointed")


def test_a_step_begins_without_waiting_for_its_checkpoint_yet_before_the_step_writes(
    workspace: Path, home: Path
) -> None:
    """begin_turn and begin_step_soon return at once (the model's request need not wait for git); the
    write the tool box tells about still waits for that checkpoint, so the change is recorded whole."""
    (workspace / "app.py").write_text("old\n")
    checkpoints = Checkpoints(make_store(workspace, home), Sink())
    gate = threading.Event()
    checkpoints.soon(gate.wait)  # the worker is busy: any checkpoint asked for now is still to be taken

    async def turn() -> list[str]:
        # were begin_turn to wait for its checkpoint, it would wait for the gate: a timeout, not a hang
        recording = await asyncio.wait_for(checkpoints.begin_turn("change app.py"), timeout=10)
        assert recording.open == {}  # returned before the worker took the turn's checkpoint
        checkpoints.begin_step_soon("task_1")  # a second step, as a plan task would begin one
        gate.set()
        for task_id in (None, "task_1"):
            await checkpoints.call(recording.note_write, task_id, "app.py")
        (workspace / "app.py").write_text("new\n")
        changes = await checkpoints.finish(recording)
        return sorted(f"{c.status} {c.path}" for c in changes or [])

    try:
        assert asyncio.run(turn()) == ["modified app.py"]
        entry = checkpoints.store.journal.entries()[-1]
        assert [step.task_id for step in entry.steps] == [None, "task_1"]
        assert all(step.before is not None and step.after is not None for step in entry.steps)
    finally:
        gate.set()
        checkpoints.close()
