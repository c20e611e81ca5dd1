"""A command's changes are not credited with what others did meanwhile (issue 29): another paicli process
in the same workspace, or the user. Real paicli processes against the fake server, real files."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import Finished, paicli_env, run_paicli, start_paicli
from tests.fakellm import FakeLLM, Reply, all_of
from tests.plan_script import PLANNER, script_summary, system_is, task_is
from tests.sandboxing import require_bwrap


def command_task(command: str, task_id: str = "cmd", files: list[str] | None = None) -> dict[str, Any]:
    """A COMMAND task; `files`: what its command writes (without, it writes nothing in the sandbox: issue 29)."""
    task: dict[str, Any] = {
        "id": task_id,
        "description": "run it",
        "type": "COMMAND",
        "dependencies": [],
        "action": {"tool": "execute_command", "args": {"command": command}},
    }
    if files is not None:
        task["files"] = files
    return task


def command_plan(command: str, task_id: str = "cmd", files: list[str] | None = None) -> Reply:
    """A plan of one COMMAND task."""
    return Reply.text(json.dumps({"summary": "s", "tasks": [command_task(command, task_id, files)]}))


def waiting_for(path: str) -> str:
    """Shell that waits (at most 60 s) until the other plan has made `path`: their steps overlap however slow
    the machine is."""
    return f"for i in $(seq 600); do [ -e {path} ] && break; sleep 0.1; done; "


def planner_for(goal: str) -> Any:
    return all_of(system_is(PLANNER), goal)


def start_plan(workspace: Path, fake: FakeLLM, home: Path, goal: str) -> subprocess.Popen[str]:
    return start_paicli(["-C", str(workspace), "plan", goal, "--yes", "--json"], paicli_env(fake, home))


def finished(process: subprocess.Popen[str]) -> Finished:
    out, err = process.communicate(timeout=60)
    return Finished(process.returncode, out, err)


def wait_for_start(workspace: Path, task_id: str) -> None:
    """Until the plan's command runs (its checkpoint step is in the journal; give it a moment more)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(
            f'"{task_id}"' in p.read_text()
            for p in (workspace / ".paicli" / "plans").glob("*.json")
            if p.stat().st_size
        ):
            time.sleep(1.0)
            return
        time.sleep(0.1)
    raise AssertionError("the first plan never started its task")


def changes(done: Finished) -> dict[str, dict[str, Any]]:
    return {c["path"]: c for c in done.of("plan_finished")[0].get("changes") or []}


def plan_id(workspace: Path, slug: str) -> str:
    (path,) = [p for p in (workspace / ".paicli" / "plans").glob(f"*{slug}*.json")]
    return path.stem


def undo(workspace: Path, fake: FakeLLM, home: Path, *args: str) -> Finished:
    return run_paicli(["-C", str(workspace), "undo", *args], paicli_env(fake, home))


def test_a_file_another_plan_writes_meanwhile_is_not_the_commands(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(planner_for("goal one"), command_plan(waiting_for("f2.txt") + "echo mine > mine.txt", files=["mine.txt"]))
    writer = {"id": "w", "description": "write f2", "type": "FILE_WRITE", "dependencies": [], "files": ["f2.txt"]}
    fake.on(planner_for("goal two"), Reply.text(json.dumps({"summary": "s", "tasks": [writer]})))
    fake.on(all_of(task_is("w"), "f2.txt\\n"), Reply.text("written"))
    fake.on(task_is("w"), Reply.tool_calls([("write_file", {"path": "f2.txt", "content": "two\n"})]))
    script_summary(fake)
    first = start_plan(workspace, fake, home, "goal one")
    wait_for_start(workspace, "cmd")
    second = run_paicli(["-C", str(workspace), "plan", "goal two", "--yes", "--json"], paicli_env(fake, home))
    assert second.code == 0, second.stderr
    one = finished(first)
    assert one.code == 0, one.stderr
    assert set(changes(one)) == {"mine.txt"} and "attributed" not in changes(one)["mine.txt"]
    assert set(changes(second)) == {"f2.txt"}
    undone = undo(workspace, fake, home, plan_id(workspace, "goal-one"))
    assert undone.code == 0, undone.stderr
    assert not (workspace / "mine.txt").exists() and (workspace / "f2.txt").read_text() == "two\n"


def test_what_the_user_does_during_a_read_only_command_is_not_the_plans(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "README.md").write_text("readme\n")
    fake.on(planner_for("goal one"), command_plan("sleep 4"))
    script_summary(fake)
    first = start_plan(workspace, fake, home, "goal one")
    wait_for_start(workspace, "cmd")
    (workspace / "README.md").write_text("edited by the user\n")
    (workspace / "notes.txt").write_text("the user's notes\n")
    one = finished(first)
    assert one.code == 0, one.stderr
    assert changes(one) == {}
    undone = undo(workspace, fake, home, plan_id(workspace, "goal-one"))
    assert undone.code != 0  # nothing of the plan's to undo
    assert (workspace / "README.md").read_text() == "edited by the user\n" and (workspace / "notes.txt").exists()


def test_a_change_made_while_another_plan_ran_a_command_is_marked_and_undo_wants_force(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """Both commands may write out/: paicli cannot tell whose out/b.txt is (its own command could have
    written it too), so it is kept, marked, and undo wants --force. The second plan's next task (it starts
    once the first one's step is in the journal) writes c.txt, which the first command waits for: its own
    out/a.txt is written after the other command could write out/, so it is its own, unmarked."""
    fake.on(planner_for("goal one"), command_plan(waiting_for("c.txt") + "echo a > out/a.txt", files=["out/"]))
    writes_b = command_task("mkdir -p out && echo b > out/b.txt", "other", ["out/"])
    then_c = {**command_task("echo c > c.txt", "later", ["c.txt"]), "dependencies": ["other"]}
    fake.on(planner_for("goal two"), Reply.text(json.dumps({"summary": "s", "tasks": [writes_b, then_c]})))
    script_summary(fake)
    first = start_plan(workspace, fake, home, "goal one")
    wait_for_start(workspace, "cmd")
    second = run_paicli(["-C", str(workspace), "plan", "goal two", "--yes", "--json"], paicli_env(fake, home))
    assert second.code == 0, second.stderr
    one = finished(first)
    assert one.code == 0, one.stderr
    seen = changes(one)
    assert seen["out/b.txt"]["attributed"] is False and "attributed" not in seen["out/a.txt"]
    refused = undo(workspace, fake, home, plan_id(workspace, "goal-one"))
    assert refused.code == 1 and "may have been changed by someone else" in refused.stderr
    assert "out/b.txt" in refused.stderr and (workspace / "out/a.txt").exists()
    forced = undo(workspace, fake, home, plan_id(workspace, "goal-one"), "--force")
    assert forced.code == 0, forced.stderr
    assert not (workspace / "out/a.txt").exists() and not (workspace / "out/b.txt").exists()
    assert (workspace / "c.txt").read_text() == "c\n"  # the other plan's


def test_what_the_user_does_while_a_writing_command_runs_is_not_the_plans(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """The sandbox holds the command to build/: the user's README.md and notes.txt are not the plan's, and
    its own build/out.txt is marked (someone wrote meanwhile; they may have written there too)."""
    require_bwrap()
    (workspace / "README.md").write_text("readme\n")
    fake.on(
        planner_for("goal one"), command_plan(waiting_for("notes.txt") + "echo made > build/out.txt", files=["build/"])
    )
    script_summary(fake)
    first = start_plan(workspace, fake, home, "goal one")
    wait_for_start(workspace, "cmd")
    (workspace / "README.md").write_text("edited by the user\n")
    (workspace / "notes.txt").write_text("the user's notes\n")
    one = finished(first)
    assert one.code == 0, one.stderr
    assert {path: change.get("attributed") for path, change in changes(one).items()} == {"build/out.txt": False}
    refused = undo(workspace, fake, home, plan_id(workspace, "goal-one"))
    assert refused.code == 1 and "build/out.txt" in refused.stderr and "README.md" not in refused.stderr
    forced = undo(workspace, fake, home, plan_id(workspace, "goal-one"), "--force")
    assert forced.code == 0, forced.stderr
    assert not (workspace / "build" / "out.txt").exists()
    assert (workspace / "README.md").read_text() == "edited by the user\n" and (workspace / "notes.txt").exists()
