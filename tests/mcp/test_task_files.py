"""A plan task's `files` bind its MCP tool calls where paicli can tell (issue 29): a workspace path named
in the arguments of a tool that is not read-only must be declared, and a FILE_READ, ANALYSIS or
VERIFICATION task may not call such a tool at all when it names none. The real CLI, the test server over
stdio, `--approval yolo` (the contract holds in every mode)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.mcp.conftest import read_marks, server_toml
from tests.plan_script import PLANNER, script_summary, system_is, task_is


def test_mcp_calls_keep_to_the_tasks_write_set(fake: FakeLLM, workspace: Path, home: Path, marks: Path) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write(server_toml("t", marks, trust_annotations=True))
    (workspace / "notes.txt").write_text("n\n")
    (workspace / "README.md").write_text("r\n")
    tasks = [
        {"id": "write", "description": "w", "type": "FILE_WRITE", "dependencies": [], "files": ["notes.txt"]},
        {"id": "cmd", "description": "c", "type": "COMMAND", "dependencies": [], "files": ["out/"]},
        {"id": "verify", "description": "v", "type": "VERIFICATION", "dependencies": []},
        {"id": "read", "description": "r", "type": "FILE_READ", "dependencies": []},
    ]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "s", "tasks": tasks})))
    echo = "mcp__t__echo"
    calls = {
        "write": [
            (echo, {"text": "notes.txt"}),
            (echo, {"text": "README.md"}),
            (echo, {"text": f"../{workspace.name}/README.md"}),
        ],
        "cmd": [
            (echo, {"text": "hello"}),
            (echo, {"text": f"file://{workspace}/README.md"}),
            (echo, {"text": "out/x"}),
        ],
        "verify": [(echo, {"text": "done"}), ("mcp__t__add", {"a": 1, "b": 2})],
        "read": [(echo, {"text": "notes.txt"})],
    }
    for task_id, batch in calls.items():
        fake.on(all_of(task_is(task_id), has_tool_result()), Reply.text(f"{task_id} over"))
        fake.on(task_is(task_id), Reply.tool_calls(batch))  # type: ignore[arg-type]
    script_summary(fake)
    done = run_paicli(
        ["-C", str(workspace), "plan", "go", "--yes", "--json", "--approval", "yolo"], paicli_env(fake, home)
    )
    assert done.code == 0, done.stderr
    results: dict[str, list[tuple[bool, str]]] = {}
    for result in done.of("tool_result"):
        results.setdefault(result["task_id"], []).append((result["ok"], result["output"]))
    write, cmd, verify, read = (results[task] for task in ("write", "cmd", "verify", "read"))
    assert write[0][0] and write[0][1].endswith("echo: notes.txt")  # declared
    assert not write[1][0] and "README.md is not among the paths it may change" in write[1][1]
    assert not write[2][0] and "is not among the paths" in write[2][1]  # back into the workspace by ..
    assert cmd[0][0]  # names no path: a COMMAND task may run it
    assert not cmd[1][0] and "README.md is not among the paths" in cmd[1][1]
    assert cmd[2][0] and cmd[2][1].endswith("echo: out/x")  # not there, under no path-like name: not a path
    assert not verify[0][0] and "names no workspace path" in verify[0][1]
    assert verify[1][0] and verify[1][1].endswith("3")  # read-only by its trusted hint: a check may call it
    assert not read[0][0] and "out of scope" in read[0][1]
    assert sorted(read_marks(marks, "calls")) == sorted(["echo", "echo", "echo", "add"])  # the refused never reached it
