"""No command's write is lost to a parallel writer (issue 29, findings 1 and 2), end to end: `paicli plan
--from FILE --yes --json --no-review` in bubblewrap. A FILE_WRITE task rewrites a.txt whole while a COMMAND
task in parallel appends to it: the command, declaring no files (or only a new file), cannot write a.txt
at all, so the writer's text is what a.txt holds and the refusal is in the command's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import task_is
from tests.sandboxing import require_bwrap

WRITTEN = "a\nWRITER\n"
APPENDS = {
    "plain": "echo CMD-LINE >> a.txt",
    "quoted": "echo CMD-LINE >> 'a.txt'",
    "dot slash": 'echo CMD-LINE >> "./a.txt"',
    "through a folder": "mkdir -p sub && echo CMD-LINE >> sub/../a.txt",
    "sed in place": "sed -i 's/^a$/CMD-LINE/' a.txt",
    "nested": "mkdir -p d/e && echo CMD-LINE > d/e/f.txt && echo CMD-LINE >> a.txt",
}


def run_race(fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, command: str, files: list[str] | None) -> str:
    (workspace / "a.txt").write_text("a\n")
    fake.on(all_of(task_is("t1"), has_tool_result("write_file")), Reply.text("wrote a.txt"))
    fake.on(task_is("t1"), Reply.tool_calls([("write_file", {"path": "a.txt", "content": WRITTEN})]))
    command_task: dict[str, object] = {
        "id": "t2",
        "description": "append",
        "type": "COMMAND",
        "action": {"tool": "execute_command", "args": {"command": command}},
    }
    if files is not None:
        command_task["files"] = files
    plan = {
        "summary": "race",
        "tasks": [{"id": "t1", "description": "write", "type": "FILE_WRITE", "files": ["a.txt"]}, command_task],
    }
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    args = ["-C", str(workspace), "plan", "--from", str(plan_file), "--yes", "--json", "--no-review"]
    done = run_paicli([*args, "--sandbox", "bwrap", "--max-replans", "0"], paicli_env(fake, home))
    [t2] = [e for e in done.of("task_finished") if e["task_id"] == "t2"]
    assert "CMD-LINE" not in (workspace / "a.txt").read_text()
    assert (workspace / "a.txt").read_text() == WRITTEN
    return json.dumps(t2)


@pytest.mark.parametrize("case", list(APPENDS))
def test_a_command_declaring_no_files_cannot_write_beside_a_writer(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, case: str
) -> None:
    require_bwrap()
    finished = run_race(fake, workspace, home, tmp_path, APPENDS[case], None)
    assert "FAILED" in finished and "declares no files" in finished
    assert not (workspace / "d").exists()


@pytest.mark.parametrize("joiner", ["; ", " && "])
def test_declaring_a_new_file_opens_that_file_alone(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, joiner: str
) -> None:
    require_bwrap()
    run_race(fake, workspace, home, tmp_path, f"echo made > out.txt{joiner}echo CMD-LINE >> a.txt", ["out.txt"])
    assert (workspace / "out.txt").read_text() == "made\n"
