"""Checkpoints and `paicli undo` end to end: real paicli processes against the fake server, a real git
repository as the workspace, and real files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.app.checkpoints.store import CheckpointStore, store_folder
from tests.conftest import Finished, paicli_env, run_paicli, start_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, SUMMARIZER, script_summary, system_is, task_is

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
    "GIT_AUTHOR_NAME": "u",
    "GIT_AUTHOR_EMAIL": "u@x",
    "GIT_COMMITTER_NAME": "u",
    "GIT_COMMITTER_EMAIL": "u@x",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True).stdout


def files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the workspace outside .git and .paicli: path → (bytes or link target, mode)."""
    found: dict[str, tuple[bytes, int]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".paicli")]
        for name in names:
            path = Path(folder) / name
            st = os.lstat(path)
            data = os.fsencode(os.readlink(path)) if stat.S_ISLNK(st.st_mode) else path.read_bytes()
            found[str(path.relative_to(root))] = (data, st.st_mode)
    return found


def git_state(root: Path) -> tuple[str, str, str, str]:
    """What the user's repository says: status, staged diff, HEAD and the stash list."""
    return (
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "diff", "--cached"),
        git(root, "rev-parse", "HEAD"),
        git(root, "stash", "list"),
    )


def task(tid: str, kind: str, deps: list[str], **extra: Any) -> dict[str, Any]:
    return {"id": tid, "description": f"do {tid}", "type": kind, "dependencies": deps, **extra}


def script_plan(fake: FakeLLM) -> None:
    """Two parallel writers (one edits app.py, one creates docs/guide.md) and a command that builds."""
    tasks = [
        task("task_1", "FILE_WRITE", [], files=["app.py"]),
        task("task_2", "FILE_WRITE", [], files=["docs/"]),
        task(
            "task_3",
            "COMMAND",
            ["task_1", "task_2"],
            files=["build/"],  # in the sandbox a command writes only what its task declares
            action={"tool": "execute_command", "args": {"command": "mkdir -p build && cat app.py > build/out.txt"}},
        ),
    ]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "edit and build", "tasks": tasks})))
    fake.on(all_of(task_is("task_1"), has_tool_result()), Reply.text("app.py edited"))
    edit = {"path": "app.py", "old_text": "old", "new_text": "new"}
    fake.on(task_is("task_1"), Reply.tool_calls([("edit_file", edit)]))
    fake.on(all_of(task_is("task_2"), has_tool_result()), Reply.text("guide written"))
    guide = {"path": "docs/guide.md", "content": "# Guide\nhi\n"}
    fake.on(task_is("task_2"), Reply.tool_calls([("write_file", guide)]))
    script_summary(fake, "Edited and built.")


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A git repository with a commit, a staged change and an untracked file of the user's."""
    git(workspace, "init", "-q")
    (workspace / "app.py").write_text("print('old')\n")
    (workspace / "README.md").write_text("readme\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "first")
    (workspace / "README.md").write_text("readme, staged edit\n")
    git(workspace, "add", "README.md")
    (workspace / "scratch.txt").write_text("the user's own notes\n")
    return workspace


def paicli(workspace: Path, fake: FakeLLM, home: Path, *args: str) -> Finished:
    return run_paicli(["-C", str(workspace), *args], paicli_env(fake, home))


def run_the_plan(repo: Path, fake: FakeLLM, home: Path) -> dict[str, Any]:
    script_plan(fake)
    done = paicli(repo, fake, home, "plan", "edit and build", "--yes", "--json", "--approval", "yolo")
    assert done.code == 0, done.stderr
    finished = done.of("plan_finished")[0]
    assert "changes" in finished, done.of("notice")  # checkpoints went off: the notices say why
    return finished


def test_a_plan_is_undone_one_task_then_whole_and_the_workspace_is_as_before(
    fake: FakeLLM, repo: Path, home: Path
) -> None:
    before, repo_before = files(repo), git_state(repo)
    finished = run_the_plan(repo, fake, home)
    assert finished["changes"] == [
        {"path": "app.py", "status": "modified", "added": 1, "removed": 1, "task_id": "task_1", "task_ids": ["task_1"]},
        {
            "path": "build/out.txt",
            "status": "created",
            "added": 1,
            "removed": 0,
            "task_id": "task_3",
            "task_ids": ["task_3"],
        },
        {
            "path": "docs/guide.md",
            "status": "created",
            "added": 2,
            "removed": 0,
            "task_id": "task_2",
            "task_ids": ["task_2"],
        },
    ]
    assert git_state(repo)[1:] == repo_before[1:]  # still staged; HEAD and stash untouched
    (saved,) = (repo / ".paicli" / "plans").glob("*.json")
    plan_id = saved.stem
    assert json.loads(saved.read_text())["changes"] == finished["changes"]

    listed = paicli(repo, fake, home, "undo", "--list")
    assert listed.code == 0 and listed.stdout.split()[:2] == [plan_id, "plan"]

    after_plan = files(repo)
    dry = paicli(repo, fake, home, "undo", "--task", "task_2", "--dry-run")
    assert dry.code == 0, dry.stderr
    assert "remove   docs/guide.md  +0 −2" in dry.stdout and files(repo) == after_plan

    one = paicli(repo, fake, home, "undo", "--task", "task_2")
    assert one.code == 0, one.stderr
    assert not (repo / "docs").exists()  # only task_2's file went back; the folder it made went too
    assert files(repo) == {k: v for k, v in after_plan.items() if k != "docs/guide.md"}

    whole = paicli(repo, fake, home, "undo", plan_id)
    assert whole.code == 0, whole.stderr
    assert files(repo) == before
    assert git_state(repo) == repo_before
    assert sorted(os.listdir(repo)) == [".git", ".paicli", "README.md", "app.py", "scratch.txt"]

    again = paicli(repo, fake, home, "undo")
    assert again.code == 1 and "nothing to undo" in again.stderr
    redo = paicli(repo, fake, home, "undo", "--redo")  # takes back the last undo: the whole plan's
    assert redo.code == 0, redo.stderr
    assert files(repo) == {k: v for k, v in after_plan.items() if k != "docs/guide.md"}
    assert paicli(repo, fake, home, "undo", "--redo").code == 0  # then the one of task_2
    assert files(repo) == after_plan
    assert paicli(repo, fake, home, "undo", "--redo").code == 1


def test_a_user_edit_after_the_plan_is_refused_without_force_and_never_lost(
    fake: FakeLLM, repo: Path, home: Path
) -> None:
    before = files(repo)
    run_the_plan(repo, fake, home)
    (repo / "app.py").write_text("print('the user fixed it by hand')\n")
    refused = paicli(repo, fake, home, "undo")
    assert refused.code == 1
    assert "app.py" in refused.stderr and "changed after" in refused.stderr and "--force" in refused.stderr
    assert (repo / "app.py").read_text() == "print('the user fixed it by hand')\n"
    assert (repo / "docs" / "guide.md").exists()  # refused means nothing changed at all
    dry = paicli(repo, fake, home, "undo", "--dry-run")
    assert dry.code == 1 and "restore  app.py" in dry.stdout
    forced = paicli(repo, fake, home, "undo", "--force")
    assert forced.code == 0, forced.stderr
    assert files(repo) == before
    back = paicli(repo, fake, home, "undo", "--redo")
    assert back.code == 0 and (repo / "app.py").read_text() == "print('the user fixed it by hand')\n"


def test_a_chat_turn_is_undone_by_its_id(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "notes.txt").write_text("one\n")
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."))
    fake.on("write the notes", Reply.tool_calls([("write_file", {"path": "notes.txt", "content": "two\n"})]))
    done = paicli(workspace, fake, home, "run", "write the notes", "--json")
    assert done.code == 0, done.stderr
    (finished,) = done.of("run_finished")
    assert finished["changes"] == [
        {"path": "notes.txt", "status": "modified", "added": 1, "removed": 1, "task_id": None, "task_ids": []}
    ]
    human = paicli(workspace, fake, home, "run", "write the notes")
    assert "Changed: notes.txt +0 −0" not in human.stderr  # nothing changed the second time: no line
    listed = paicli(workspace, fake, home, "undo", "--list")
    turn_id = listed.stdout.split()[0]
    assert turn_id.startswith("turn-") and "write the notes" in listed.stdout
    assert paicli(workspace, fake, home, "undo", turn_id).code == 0
    assert (workspace / "notes.txt").read_text() == "one\n"


def test_the_changed_line_and_no_changes_key_when_checkpoints_are_off(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."), repeat=True)
    fake.on("write", Reply.tool_calls([("write_file", {"path": "a.txt", "content": "a\nb\n"})]), repeat=True)
    human = paicli(workspace, fake, home, "run", "write")
    assert human.code == 0 and "Changed: a.txt +2 −0 · paicli undo to revert" in human.stderr
    (workspace / "a.txt").unlink()
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write("checkpoints = false\n")
    off = paicli(workspace, fake, home, "run", "write", "--json")
    assert off.code == 0, off.stderr
    assert "changes" not in off.of("run_finished")[0]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["undo", "no-such-plan"], 2, "no checkpoint 'no-such-plan'"),
        (["undo", "../../etc/passwd"], 2, "no checkpoint"),
        (["undo", "--task", "task_9"], 2, "no plan"),
        (["undo"], 1, "nothing to undo"),
        (["undo", "--redo"], 1, "nothing to redo"),
        (["undo", "--list", "--redo"], 2, "go alone"),
    ],
)
def test_undo_with_nothing_to_undo_or_an_unknown_id(
    fake: FakeLLM, workspace: Path, home: Path, args: list[str], code: int, says: str
) -> None:
    done = paicli(workspace, fake, home, *args)
    assert done.code == code and says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_what_a_cancelled_run_changed_can_be_undone(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "notes.txt").write_text("one\n")
    fake.on(has_tool_result("write_file"), Reply.hang())
    fake.on("write then wait", Reply.tool_calls([("write_file", {"path": "notes.txt", "content": "two\n"})]))
    running = start_paicli(["-C", str(workspace), "run", "write then wait", "--json"], paicli_env(fake, home))
    fake.wait_for_requests(2, timeout=30)
    running.send_signal(signal.SIGTERM)
    running.communicate(timeout=30)
    assert running.returncode == 130
    assert (workspace / "notes.txt").read_text() == "two\n"
    undone = paicli(workspace, fake, home, "undo")
    assert undone.code == 0, undone.stderr
    assert (workspace / "notes.txt").read_text() == "one\n"


def test_a_cancelled_plan_keeps_its_changes_and_resume_goes_on_recording(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    tasks = [
        task("task_1", "FILE_WRITE", [], files=["a.py"]),
        task("task_2", "FILE_WRITE", ["task_1"], files=["b.py", "c.py"]),  # c.py unwritten: task_2 asks on
    ]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "two steps", "tasks": tasks})))
    fake.on(all_of(task_is("task_1"), has_tool_result()), Reply.text("a written"))
    fake.on(task_is("task_1"), Reply.tool_calls([("write_file", {"path": "a.py", "content": "a\n"})]))
    fake.on(all_of(task_is("task_2"), has_tool_result()), Reply.hang(), Reply.text("b written"))
    fake.on(task_is("task_2"), Reply.tool_calls([("write_file", {"path": "b.py", "content": "b\n"})]), repeat=True)
    script_summary(fake)
    env = paicli_env(fake, home)
    running = start_paicli(["-C", str(workspace), "plan", "two steps", "--yes", "--json"], env)
    for _ in range(300):  # until task_2 has written b.py and waits for its model (a guard, not a timing)
        if any(r.body and all_of(task_is("task_2"), has_tool_result())(r.body) for r in fake.requests):
            break
        assert running.poll() is None, running.communicate()
        fake.wait_for_requests(len(fake.requests) + 1, timeout=1)
    running.send_signal(signal.SIGTERM)
    out, _ = running.communicate(timeout=30)
    assert running.returncode == 130
    cancelled = next(json.loads(line) for line in out.splitlines() if '"plan_finished"' in line)
    assert cancelled["status"] == "CANCELLED"
    assert {c["path"]: c["task_id"] for c in cancelled["changes"]} == {"a.py": "task_1", "b.py": "task_2"}
    (saved,) = (workspace / ".paicli" / "plans").glob("*.json")
    assert [c["path"] for c in json.loads(saved.read_text())["changes"]] == ["a.py", "b.py"]

    resumed = paicli(workspace, fake, home, "plan", "--resume", saved.stem, "--yes", "--json")
    assert resumed.code == 0, resumed.stderr
    finished = resumed.of("plan_finished")[0]
    assert {c["path"]: c["task_id"] for c in finished["changes"]} == {"a.py": "task_1", "b.py": "task_2"}
    listed = paicli(workspace, fake, home, "undo", "--list")
    assert len(listed.stdout.splitlines()) == 1 and listed.stdout.startswith(saved.stem)
    assert paicli(workspace, fake, home, "undo").code == 0
    assert sorted(os.listdir(workspace)) == [".paicli"]


def test_changes_is_an_empty_list_when_nothing_changed(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "look", "tasks": [task("t", "ANALYSIS", [])]})))
    fake.on(task_is("t"), Reply.text("looked"))
    script_summary(fake)
    fake.on("just answer", Reply.text("An answer."))
    planned = paicli(workspace, fake, home, "plan", "look around", "--yes", "--json")
    assert planned.code == 0, planned.stderr
    assert planned.of("plan_finished")[0]["changes"] == []
    answered = paicli(workspace, fake, home, "run", "just answer", "--json")
    assert answered.of("run_finished")[0]["changes"] == []
    assert paicli(workspace, fake, home, "undo", "--list").stdout == "nothing to undo yet\n"


def test_a_file_over_the_size_limit_is_left_out_with_a_notice_but_a_tool_write_is_kept(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write("checkpoint_max_file_mb = 0.001\n")  # 1,000 bytes
    (workspace / "big.log").write_bytes(b"x" * 5000)
    (workspace / "big.dat").write_bytes(b"y" * 5000)
    fake.on(has_tool_result("write_file"), Reply.text("Done."))
    fake.on("shrink it", Reply.tool_calls([("write_file", {"path": "big.dat", "content": "small\n"})]))
    done = paicli(workspace, fake, home, "run", "shrink it", "--json")
    assert done.code == 0, done.stderr
    notices = [e["message"] for e in done.of("notice") if "limit" in e["message"]]
    assert len(notices) == 2 and all("checkpoints leave out big." in n for n in notices)
    assert [c["path"] for c in done.of("run_finished")[0]["changes"]] == ["big.dat"]
    assert paicli(workspace, fake, home, "undo").code == 0
    assert (workspace / "big.dat").read_bytes() == b"y" * 5000


def test_the_first_checkpoint_is_taken_while_the_planner_thinks(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """Even a plan that writes nothing warms the store up: the checkpoint is started with the planning
    request, so a plan's first writing task finds the workspace already stored."""
    for n in range(120):
        (workspace / f"m{n}.py").write_text(f"x = {n}\n")
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "look", "tasks": [task("t", "ANALYSIS", [])]})))
    fake.on(task_is("t"), Reply.text("looked"))
    script_summary(fake)
    planned = paicli(workspace, fake, home, "plan", "look around", "--yes", "--json")
    assert planned.code == 0, planned.stderr
    store = CheckpointStore(shutil.which("git") or "git", workspace, store_folder(home, workspace), notify=print)
    assert len(store.git.run(["ls-files"]).splitlines()) == 120
    assert planned.of("plan_finished")[0]["changes"] == []


def test_the_summary_does_not_wait_for_the_last_tasks_checkpoint(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A task's closing checkpoint is taken in the background (the checkpoint worker still takes it before
    any later step begins): here git is made slow at the closing checkpoint, and the summary request is
    made while it is still being taken. The changes in plan_finished still include the task's file."""
    shims = tmp_path / "shims"
    shims.mkdir()
    real_git = shutil.which("git") or "/usr/bin/git"
    marks = tmp_path / "marks"
    (shims / "git").write_text(
        "#!/bin/sh\n"
        'case "$*" in *"checkpoint: after task_1"*) sleep 2; '
        f"{sys.executable} -c 'import time; print(time.monotonic())' >> {marks} ;; esac\n"
        f'exec {real_git} "$@"\n'
    )
    (shims / "git").chmod(0o755)
    tasks = [task("task_1", "FILE_WRITE", [], files=["a.py"])]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "one step", "tasks": tasks})))
    fake.on(task_is("task_1"), Reply.tool_calls([("write_file", {"path": "a.py", "content": "a\n"})]))
    script_summary(fake)
    env = paicli_env(fake, home) | {"PATH": f"{shims}:{os.environ['PATH']}"}
    planned = run_paicli(["-C", str(workspace), "plan", "one step", "--yes", "--json"], env)
    assert planned.code == 0, planned.stderr
    summary = next(r for r in fake.requests if r.body and system_is(SUMMARIZER)(r.body))
    closing_checkpoint_done = float(marks.read_text().split()[0])
    assert summary.started < closing_checkpoint_done  # one monotonic clock: the order, not a duration
    (change,) = planned.of("plan_finished")[0]["changes"]
    assert (change["path"], change["task_id"]) == ("a.py", "task_1")
