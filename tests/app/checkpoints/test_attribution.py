"""Whose a command's changes are (issue 29): what the task declared and the sandbox held it to, what
parallel tasks could write, and a sign that someone else wrote meanwhile. A real store on real files;
"the user" writes files between a command's start and end, as an editor would."""

from __future__ import annotations

from pathlib import Path

from paicli.app.checkpoints.recording import Recording
from paicli.app.checkpoints.store import CheckpointStore
from tests.app.checkpoints.conftest import recording, tool_write, undo


def write(workspace: Path, path: str, text: str) -> None:
    (workspace / path).parent.mkdir(parents=True, exist_ok=True)
    (workspace / path).write_text(text)


def start_command(rec: Recording, task_id: str, declared: tuple[str, ...] | None, *, held: bool) -> None:
    """What the tool box tells the checkpoints before a plan task's command runs."""
    rec.begin_step(task_id)
    rec.note_execute(task_id, declared, held)


def changes(rec: Recording) -> dict[str, tuple[list[str], bool]]:
    rec.finish()
    return {c.path: (c.task_ids, c.attributed) for c in rec.changes() or []}


def test_what_the_user_writes_outside_a_held_commands_files_is_not_its_and_marks_its_own(
    store: CheckpointStore, workspace: Path
) -> None:
    write(workspace, "README.md", "readme\n")
    write(workspace, "old.txt", "old\n")
    rec = recording(store, "plan", "p1")
    start_command(rec, "build", ("build/",), held=True)
    write(workspace, "build/out.txt", "made\n")  # the command
    write(workspace, "README.md", "edited by the user\n")  # the user, meanwhile
    write(workspace, "notes.txt", "the user's notes\n")
    (workspace / "old.txt").unlink()
    rec.end_step("build")
    assert changes(rec) == {"build/out.txt": (["build"], False)}  # someone else wrote: maybe here too
    refused = undo(store, "p1")
    assert refused.code == 1 and "build/out.txt" in "\n".join(refused.err)
    assert "may have been changed by someone else" in "\n".join(refused.err)
    forced = undo(store, "p1", force=True)
    assert forced.code == 0, forced.err
    assert not (workspace / "build/out.txt").exists()
    assert (workspace / "README.md").read_text() == "edited by the user\n" and (workspace / "notes.txt").exists()
    assert not (workspace / "old.txt").exists()  # the user's deletion is theirs too


def test_a_held_command_alone_keeps_its_changes_attributed(store: CheckpointStore, workspace: Path) -> None:
    rec = recording(store, "plan", "p1")
    start_command(rec, "build", ("build/", "dist/app.js"), held=True)
    write(workspace, "build/out.txt", "made\n")
    write(workspace, "dist/app.js", "js\n")
    write(workspace, "pkg/__pycache__/m.pyc", "cache\n")  # a tool cache: writable for every command
    rec.end_step("build")
    assert changes(rec) == {
        "build/out.txt": (["build"], True),
        "dist/app.js": (["build"], True),
        "pkg/__pycache__/m.pyc": (["build"], True),
    }


def test_the_user_writing_inside_the_declared_files_cannot_be_told_apart(
    store: CheckpointStore, workspace: Path
) -> None:
    """The limit: with nothing written elsewhere, a file the command could write is credited to it."""
    rec = recording(store, "plan", "p1")
    start_command(rec, "build", ("build/",), held=True)
    write(workspace, "build/user.txt", "the user's\n")
    rec.end_step("build")
    assert changes(rec) == {"build/user.txt": (["build"], True)}


def test_parallel_tasks_explain_each_others_changes(store: CheckpointStore, workspace: Path) -> None:
    """Two held commands and a file tool writing at once in one plan: each change is its writer's, none is
    taken as a sign of someone else."""
    rec = recording(store, "plan", "p1")
    start_command(rec, "one", ("a/",), held=True)
    start_command(rec, "two", ("b/",), held=True)
    rec.begin_step("writer")
    write(workspace, "a/x.txt", "one\n")
    write(workspace, "b/y.txt", "two\n")
    tool_write(rec, "writer", "c.txt", "tool\n")
    rec.end_step("one")
    rec.end_step("writer")
    rec.end_step("two")
    assert changes(rec) == {"a/x.txt": (["one"], True), "b/y.txt": (["two"], True), "c.txt": (["writer"], True)}


def test_without_the_sandbox_a_change_outside_the_declaration_is_kept_but_marked(
    store: CheckpointStore, workspace: Path
) -> None:
    write(workspace, "README.md", "readme\n")
    rec = recording(store, "plan", "p1")
    start_command(rec, "build", ("build/",), held=False)  # --sandbox off: the command could write anything
    write(workspace, "build/out.txt", "made\n")
    write(workspace, "README.md", "edited by someone\n")
    rec.end_step("build")
    assert changes(rec) == {"build/out.txt": (["build"], True), "README.md": (["build"], False)}
    refused = undo(store, "p1")
    assert refused.code == 1 and "README.md" in "\n".join(refused.err)
    assert (workspace / "README.md").read_text() == "edited by someone\n"


def test_a_command_let_out_of_the_sandbox_is_no_longer_held(store: CheckpointStore, workspace: Path) -> None:
    """The sandbox stopped it and the user let it run outside: the tool box tells the checkpoints again."""
    rec = recording(store, "plan", "p1")
    start_command(rec, "build", ("build/",), held=True)
    rec.note_execute("build", ("build/",), False)
    write(workspace, "elsewhere.txt", "written outside\n")
    rec.end_step("build")
    assert rec.entry.steps[0].held is False
    assert changes(rec) == {"elsewhere.txt": (["build"], False)}


def test_a_chat_turns_command_keeps_what_changed(store: CheckpointStore, workspace: Path) -> None:
    rec = recording(store, "turn", "t1")
    start_command(rec, None, None, held=True)  # chat: no declaration, whatever the sandbox
    write(workspace, "anything.txt", "x\n")
    rec.end_step(None)
    assert changes(rec) == {"anything.txt": ([], True)}
