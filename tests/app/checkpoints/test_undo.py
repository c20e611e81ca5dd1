"""Undo and redo on a real workspace: byte for byte back to before, one task at a time, nothing lost."""

from __future__ import annotations

import os
import time
from pathlib import Path

from paicli.app.checkpoints.images import blob_id
from paicli.app.checkpoints.snapshot import BULK
from paicli.app.checkpoints.store import PRUNE_SLACK, CheckpointStore
from tests.app.checkpoints.conftest import command, recording, state, tool_write, undo


def test_undo_of_a_turn_brings_the_workspace_back_byte_for_byte(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "app.py").write_text("print('old')\n")
    (workspace / "gone.txt").write_text("keep me\n")
    (workspace / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(workspace / "tool.sh", 0o755)
    before = state(workspace)
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "app.py", "print('new')\n")
    tool_write(rec, None, "src/pkg/new module.py", "x = 1\n")
    command(rec, None, "rm gone.txt && chmod -x tool.sh && printf 'bin\\0ary' > data.bin")
    rec.finish()
    assert {(c.path, c.status) for c in rec.changes() or []} == {
        ("app.py", "modified"),
        ("src/pkg/new module.py", "created"),
        ("gone.txt", "deleted"),
        ("tool.sh", "modified"),
        ("data.bin", "created"),
    }
    binary = next(c for c in rec.changes() or [] if c.path == "data.bin")
    assert binary.added is None and binary.removed is None
    answer = undo(store)
    assert answer.code == 0, answer.err
    assert state(workspace) == before  # created folders went too; the exec bit came back
    assert "remove" in "\n".join(answer.out) and "recreate" in "\n".join(answer.out)


def test_redo_takes_the_undo_back_and_undo_works_again(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "a.txt", "two\n")
    tool_write(rec, None, "b.txt", "new\n")
    rec.finish()
    after = state(workspace)
    assert undo(store).code == 0
    assert (workspace / "a.txt").read_text() == "one\n" and not (workspace / "b.txt").exists()
    assert undo(store, redo=True).code == 0
    assert state(workspace) == after
    assert undo(store).code == 0 and (workspace / "a.txt").read_text() == "one\n"
    second = undo(store)
    assert second.code == 1 and "nothing to undo" in second.err[0]


def test_a_file_changed_after_the_turn_is_not_overwritten_without_force(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "a.txt", "two\n")
    tool_write(rec, None, "b.txt", "bee\n")
    rec.finish()
    (workspace / "a.txt").write_text("the user's edit\n")
    dry = undo(store, dry_run=True)
    assert dry.code == 1 and any("changed after" in line for line in dry.out)
    refused = undo(store)
    assert refused.code == 1 and "a.txt" in "\n".join(refused.err) and "--force" in refused.err[-1]
    assert (workspace / "a.txt").read_text() == "the user's edit\n" and (workspace / "b.txt").exists()
    forced = undo(store, force=True)
    assert forced.code == 0 and (workspace / "a.txt").read_text() == "one\n" and not (workspace / "b.txt").exists()
    # the user's edit is not lost: redo brings back what the undo replaced
    assert undo(store, redo=True).code == 0
    assert (workspace / "a.txt").read_text() == "the user's edit\n"


def test_dry_run_changes_nothing_and_shows_paths_actions_and_lines(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "a.txt").write_text("1\n2\n3\n")
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "a.txt", "1\n")
    rec.finish()
    before = state(workspace)
    dry = undo(store, dry_run=True)
    assert dry.code == 0
    assert dry.out[1].split() == ["restore", "a.txt", "+2", "−0"]
    assert state(workspace) == before


def test_a_symlink_is_restored_as_a_link_and_never_followed_outside(
    store: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    os.symlink("../outside/secret.txt", workspace / "link")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("doc\n")
    before = state(workspace)
    rec = recording(store)
    rec.begin_step(None)
    # the command replaces the link by a file and the docs folder by a symlink to the outside folder
    command(rec, None, f"rm link && echo plain > link && rm -r docs && ln -s {outside} docs")
    rec.finish()
    assert undo(store).code == 0
    assert state(workspace) == before
    assert os.readlink(workspace / "link") == "../outside/secret.txt"
    assert sorted(os.listdir(outside)) == ["secret.txt"] and (outside / "secret.txt").read_text() == "outside\n"


def test_a_restore_below_a_folder_that_became_a_symlink_is_refused_not_followed(
    store: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("doc\n")
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "docs/a.md", "changed\n")
    rec.finish()
    os.rename(workspace / "docs", tmp_path / "moved")
    os.symlink(outside, workspace / "docs")  # someone swapped the folder for a link after the turn
    answer = undo(store, force=True)
    assert answer.code == 1
    assert "symlink" in "\n".join(answer.out)
    assert os.listdir(outside) == []


def test_one_task_of_a_plan_is_undone_alone(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "a.py").write_text("a = 0\n")
    rec = recording(store, "plan", "20260101-plan")
    for task, path in (("task_1", "a.py"), ("task_2", "b.py")):
        rec.begin_step(task)
        tool_write(rec, task, path, f"{task} was here\n")
        rec.end_step(task)
    rec.begin_step("task_3")
    command(rec, "task_3", "echo built > out.txt")
    rec.end_step("task_3")
    rec.finish()
    assert {c.path: c.task_id for c in rec.changes() or []} == {"a.py": "task_1", "b.py": "task_2", "out.txt": "task_3"}
    answer = undo(store, task="task_2")
    assert answer.code == 0, answer.err
    assert not (workspace / "b.py").exists()
    assert (workspace / "a.py").read_text() == "task_1 was here\n" and (workspace / "out.txt").exists()
    assert undo(store, "20260101-plan").code == 0
    assert sorted(os.listdir(workspace)) == ["a.py"] and (workspace / "a.py").read_text() == "a = 0\n"


def test_undoing_a_task_whose_file_a_later_task_changed_again_is_refused_with_the_files(
    store: CheckpointStore, workspace: Path
) -> None:
    rec = recording(store, "plan", "p1")
    rec.begin_step("task_1")
    tool_write(rec, "task_1", "a.py", "first\n")
    tool_write(rec, "task_1", "only1.py", "mine\n")
    rec.end_step("task_1")
    rec.begin_step("task_2")
    tool_write(rec, "task_2", "a.py", "second\n")
    rec.end_step("task_2")
    rec.finish()
    refused = undo(store, task="task_1")
    assert refused.code == 1
    assert any("a.py (also task_2)" in line for line in refused.err)
    assert (workspace / "a.py").read_text() == "second\n" and (workspace / "only1.py").exists()
    assert undo(store, task="task_1", force=True).code == 0
    assert not (workspace / "a.py").exists() and not (workspace / "only1.py").exists()


def test_unknown_ids_are_usage_errors_and_nothing_to_undo_is_1(store: CheckpointStore, workspace: Path) -> None:
    nothing = undo(store)
    assert nothing.code == 1 and "nothing to undo" in nothing.err[0]
    assert undo(store, "no-such-plan").code == 2
    assert undo(store, "../../etc/passwd").code == 2
    rec = recording(store, "plan", "p1")
    rec.begin_step("task_1")
    tool_write(rec, "task_1", "a.py", "x\n")
    rec.end_step("task_1")
    rec.finish()
    unknown_task = undo(store, task="task_9")
    assert unknown_task.code == 2 and "task_1" in unknown_task.err[0]
    assert undo(store, redo=True).code == 1
    assert undo(store, "p1", redo=True).code == 2


def test_list_shows_turns_and_plans_that_changed_files_newest_first(store: CheckpointStore, workspace: Path) -> None:
    plan = recording(store, "plan", "p1")
    plan.begin_step("task_1")
    tool_write(plan, "task_1", "a.py", "x\n")
    plan.end_step("task_1")
    plan.finish()
    idle = recording(store)
    idle.begin_step(None)
    idle.finish()  # a turn that changed nothing is not kept
    turn = recording(store)
    turn.begin_step(None)
    tool_write(turn, None, "b.py", "y\n")
    turn.finish()
    listed = undo(store, list_only=True)
    assert [line.split()[:2] for line in listed.out] == [[turn.entry.id, "turn"], ["p1", "plan"]]
    assert undo(store).code == 0 and not (workspace / "b.py").exists()  # the default: the latest
    assert "undone" in undo(store, list_only=True).out[0]


def test_pruning_keeps_the_latest_entries(workspace: Path, home: Path) -> None:
    store = CheckpointStore("git", workspace, home / "cp", notify=lambda m: None, keep=2)
    for n in range(9):
        rec = recording(store, "plan", f"p{n}")
        rec.begin_step("t")
        tool_write(rec, "t", "a.txt", f"{n}\n")
        rec.end_step("t")
        rec.finish()
    kept = [e.id for e in store.journal.entries()]
    assert len(kept) <= 2 + 5 and kept[-2:] == ["p7", "p8"] and "p0" not in kept
    refs = store.git.run(["for-each-ref", "--format=%(refname)", "refs/paicli/"]).decode().split()
    assert not any(ref.startswith("refs/paicli/p0/") for ref in refs)
    assert undo(store, "p8").code == 0 and (workspace / "a.txt").read_text() == "7\n"


def test_undoing_the_later_of_two_tasks_on_one_file_keeps_the_earlier_tasks_work(
    store: CheckpointStore, workspace: Path
) -> None:
    rec = recording(store, "plan", "p2")
    rec.begin_step("task_1")
    tool_write(rec, "task_1", "a.py", "first\n")
    rec.end_step("task_1")
    rec.begin_step("task_2")
    tool_write(rec, "task_2", "a.py", "second\n")
    rec.end_step("task_2")
    rec.finish()
    answer = undo(store, task="task_2")
    assert answer.code == 0, answer.err
    assert (workspace / "a.py").read_text() == "first\n"
    assert undo(store, "p2").code == 0 and not (workspace / "a.py").exists()


def test_a_task_whose_file_a_parallel_task_changed_meanwhile_is_refused(
    store: CheckpointStore, workspace: Path
) -> None:
    rec = recording(store, "plan", "p3")
    rec.begin_step("task_1")
    rec.begin_step("task_2")  # both running
    command(rec, "task_1", "echo one > shared.txt")
    command(rec, "task_2", "echo two >> shared.txt")
    rec.end_step("task_1")
    rec.end_step("task_2")
    rec.finish()
    assert [(c.path, c.task_id, c.task_ids) for c in rec.changes() or []] == [
        ("shared.txt", None, ["task_1", "task_2"])
    ]
    for task, other in (("task_1", "task_2"), ("task_2", "task_1")):
        refused = undo(store, task=task)
        assert refused.code == 1 and any(f"shared.txt (also {other})" in line for line in refused.err)
    assert (workspace / "shared.txt").read_text() == "one\ntwo\n"


def test_a_file_swapped_for_a_symlink_after_the_turn_is_replaced_never_written_through(
    store: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside, never to be written\n")
    (workspace / "app.py").write_text("old\n")
    (workspace / "made.txt").write_text("x\n")
    rec = recording(store)
    rec.begin_step(None)
    tool_write(rec, None, "app.py", "new\n")
    command(rec, None, "rm made.txt")
    rec.finish()
    os.remove(workspace / "app.py")
    os.symlink(secret, workspace / "app.py")  # planted between the turn and the undo
    os.symlink(secret, workspace / "made.txt")
    refused = undo(store)
    assert refused.code == 1 and "app.py" in "\n".join(refused.err) and "made.txt" in "\n".join(refused.err)
    assert undo(store, force=True).code == 0
    assert secret.read_text() == "outside, never to be written\n"
    assert not (workspace / "app.py").is_symlink() and (workspace / "app.py").read_text() == "old\n"
    assert not (workspace / "made.txt").is_symlink() and (workspace / "made.txt").read_text() == "x\n"
    assert undo(store, redo=True).code == 0  # the planted links were kept too: redo puts them back
    assert os.readlink(workspace / "app.py") == str(secret) and secret.read_text().startswith("outside")


def test_pruning_drops_old_contents_from_packs_too(workspace: Path, home: Path) -> None:
    store = CheckpointStore("git", workspace, home / "cp", notify=lambda m: None, keep=2)

    def round_of(n: int) -> None:
        rec = recording(store, "plan", f"p{n}")
        rec.begin_step("t")
        command(rec, "t", f"rm -rf d; mkdir d; for i in $(seq {BULK + 10}); do echo 'round {n} file '$i > d/$i; done")
        rec.end_step("t")
        rec.finish()

    for n in range(9):
        round_of(n)
    objects = store.git.git_dir / "objects"
    assert 1 <= len(list((objects / "pack").glob("*.pack"))) <= 2 + PRUNE_SLACK
    first_round = blob_id(b"round 0 file 1\n")
    loose = objects / first_round[:2] / first_round[2:]
    assert loose.is_file()  # out of the packs; spared for a day (a running step may still need such)
    for path in objects.glob("??/*"):
        os.utime(path, (time.time() - 2 * 86400,) * 2)
    for n in range(9, 9 + PRUNE_SLACK + 1):  # the next prune
        round_of(n)
    latest = 8 + PRUNE_SLACK + 1
    last_round = blob_id(f"round {latest} file 1\n".encode())
    checked = store.git.run(["cat-file", "--batch-check"], input=f"{first_round}\n{last_round}\n".encode())
    assert checked.decode().splitlines() == [f"{first_round} missing", f"{last_round} blob 16"]
    assert undo(store, f"p{latest}").code == 0
    assert (workspace / "d" / "1").read_text() == f"round {latest - 1} file 1\n"
