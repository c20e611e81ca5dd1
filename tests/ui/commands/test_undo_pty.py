"""/undo, /redo and /changes in the REPL, through a real pseudo-terminal against the fake model server."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from paicli.app.checkpoints.git import GitError
from paicli.app.checkpoints.store import CheckpointStore, store_folder
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, script_summary, system_is, task_is
from tests.ui.conftest import ANSI, PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def send_line(child: pexpect.spawn, text: str) -> None:
    child.send(text)
    child.send(ENTER)


def writes(fake: FakeLLM, message: str, path: str, content: str) -> None:
    """The model answers `message` by writing `path`, then says so."""
    fake.on(all_of(message, has_tool_result("write_file")), Reply.text(f"I wrote {path}."))
    fake.on(message, Reply.tool_calls([("write_file", {"path": path, "content": content})]))


def test_a_turn_shows_what_it_changed_and_undo_redo_and_changes_work(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('old')\n")
    writes(fake, "fix the app", "app.py", "print('new')\nprint('more')\n")
    fake.on("what now", Reply.text("Noted."))
    child = spawn_repl("--approval", "yolo")
    send_line(child, "fix the app")
    expect_text(child, "I wrote app.py.")
    expect_text(child, "Changed: app.py +2 −1 · /undo to revert")
    child.expect_exact(PROMPT)

    send_line(child, "/changes")
    expect_text(child, "modified app.py  +2 −1")
    expect_text(child, "-print('old')")
    expect_text(child, "+print('more')")
    child.expect_exact(PROMPT)

    send_line(child, "/undo")
    expect_text(child, "undid turn-")
    expect_text(child, "restore  app.py")
    expect_text(child, "/redo takes it back")
    child.expect_exact(PROMPT)
    assert (workspace / "app.py").read_text() == "print('old')\n"

    send_line(child, "/redo")
    expect_text(child, "took back the undo of turn-")
    child.expect_exact(PROMPT)
    assert (workspace / "app.py").read_text() == "print('new')\nprint('more')\n"

    send_line(child, "what now")  # the model hears what the user did to the files behind its back
    expect_text(child, "Noted.")
    child.expect_exact(PROMPT)
    told = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"][-1]
    assert "the user undid turn-" in told and "took back the undo" in told and told.endswith("what now")


def test_undo_asks_before_overwriting_a_file_the_user_changed(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    writes(fake, "make notes", "notes.txt", "model notes\n")
    child = spawn_repl("--approval", "yolo")
    send_line(child, "make notes")
    expect_text(child, "Changed: notes.txt +1 −0")
    child.expect_exact(PROMPT)
    (workspace / "notes.txt").write_text("my own notes now\n")
    send_line(child, "/undo")
    expect_text(child, "changed after")
    expect_text(child, "Overwrite them? [y/N]")
    send_line(child, "n")
    expect_text(child, "nothing changed")
    child.expect_exact(PROMPT)
    assert (workspace / "notes.txt").read_text() == "my own notes now\n"
    send_line(child, "/undo")
    expect_text(child, "Overwrite them? [y/N]")
    send_line(child, "y")
    expect_text(child, "remove   notes.txt")
    child.expect_exact(PROMPT)
    assert not (workspace / "notes.txt").exists()
    send_line(child, "/redo")  # the user's own version comes back: nothing is lost
    expect_text(child, "took back the undo")
    child.expect_exact(PROMPT)
    assert (workspace / "notes.txt").read_text() == "my own notes now\n"


def plan_reply(tasks: list[dict[str, Any]]) -> Reply:
    return Reply.text(json.dumps({"summary": "two writers", "tasks": tasks}))


def test_a_plan_task_is_undone_alone_and_changes_shows_one_task(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    tasks = [
        {"id": "task_1", "description": "write a", "type": "FILE_WRITE", "dependencies": [], "files": ["a.py"]},
        {"id": "task_2", "description": "write b", "type": "FILE_WRITE", "dependencies": [], "files": ["b.py"]},
    ]
    fake.on(system_is(PLANNER), plan_reply(tasks))
    for tid, path in (("task_1", "a.py"), ("task_2", "b.py")):
        fake.on(all_of(task_is(tid), has_tool_result()), Reply.text(f"{path} written"))
        fake.on(task_is(tid), Reply.tool_calls([("write_file", {"path": path, "content": f"{tid}\n"})]))
    script_summary(fake, "Both written.")
    child = spawn_repl("--no-review", "--approval", "yolo")
    send_line(child, "/plan write two files")
    expect_text(child, "two writers")
    expect_text(child, "Enter")
    child.send(ENTER)
    child.expect_exact(PROMPT, timeout=30)
    shown = re.sub(ANSI, "", child.before)
    assert "Both written." in shown
    assert "Changed: a.py +1 −0 (task_1) · b.py +1 −0 (task_2) · /undo to revert" in shown

    send_line(child, "/changes task_2")
    expect_text(child, "task_2 of ")
    expect_text(child, "created  b.py  +1 −0  (task_2)")
    expect_text(child, "+task_2")
    child.expect_exact(PROMPT)

    send_line(child, "/undo task_2")
    expect_text(child, "undid task_2 of")
    child.expect_exact(PROMPT)
    assert not (workspace / "b.py").exists() and (workspace / "a.py").read_text() == "task_1\n"

    send_line(child, "/undo task_9")
    expect_text(child, "no task of the last plan and no checkpoint is called 'task_9'")
    child.expect_exact(PROMPT)
    send_line(child, "/undo")
    expect_text(child, "remove   a.py")
    child.expect_exact(PROMPT)
    assert sorted(p.name for p in workspace.iterdir()) == [".paicli"]


def test_a_long_diff_goes_through_the_pager(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    writes(fake, "write a lot", "long.txt", "".join(f"line {n}\n" for n in range(200)))
    child = spawn_repl("--approval", "yolo", env={"PAGER": "sed -e 1s/^/PAGER:/"})
    send_line(child, "write a lot")
    expect_text(child, "Changed: long.txt +200 −0")
    child.expect_exact(PROMPT)
    send_line(child, "/changes")
    expect_text(child, "PAGER:")
    expect_text(child, "+line 199")
    child.expect_exact(PROMPT)


def test_without_checkpoints_the_commands_say_so(spawn_repl: Spawn, fake: FakeLLM, home: Path) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write("checkpoints = false\n")
    child = spawn_repl()
    for command in ("/undo", "/changes", "/redo"):
        send_line(child, command)
        expect_text(child, "checkpoints are off")
        expect_text(child, "set `checkpoints = true` in .paicli/config.toml")  # what to do about it
        if command == "/changes":
            expect_text(child, "the diff under each edit shows what it changed")
        child.expect_exact(PROMPT)


def test_the_first_checkpoint_is_taken_while_the_first_message_is_typed(
    spawn_repl: Spawn, workspace: Path, home: Path
) -> None:
    for n in range(150):
        (workspace / f"m{n}.py").write_text(f"x = {n}\n")
    child = spawn_repl()  # at its first prompt
    store = CheckpointStore(shutil.which("git") or "git", workspace, store_folder(home, workspace), notify=print)

    def stored() -> int:
        try:
            return len(store.git.run(["ls-files"]).splitlines())
        except GitError:
            return 0  # not created yet

    deadline = time.monotonic() + 60
    while stored() < 150 and time.monotonic() < deadline:
        time.sleep(0.05)  # waiting for the background work, not timing it
    assert stored() == 150  # the whole workspace is in the shadow index, and no message was sent
    child.sendeof()
    child.expect(pexpect.EOF)
