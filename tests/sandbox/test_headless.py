"""The sandbox from the command line, end to end (`paicli run` as a subprocess, the fake model server):
`auto` runs a test runner unasked when commands are contained and refuses it when not; a broken
bubblewrap makes `auto` fall back with one notice and `--sandbox bwrap` fail clearly; a repository's
config cannot switch the sandbox off until trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.plan_script import PLANNER, system_is
from tests.sandboxing import require_bwrap


def fake_pytest(folder: Path) -> str:
    """A `pytest` of our own on PATH (outside the workspace): it says it ran and leaves a file."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "pytest"
    program.write_text("#!/bin/sh\necho 'fake pytest ran'\ntouch ran.txt\n")
    program.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', os.defpath)}"


def run_tests(fake: FakeLLM, workspace: Path, home: Path, path: str, *flags: str) -> Finished:
    fake.on(has_tool_result("execute_command"), Reply.text("tests ran"))
    fake.on("run the tests", Reply.tool_calls([("execute_command", {"command": "pytest -q"})]))
    env = paicli_env(fake, home, PATH=path)
    return run_paicli(["-C", str(workspace), "run", "run the tests", "--json", "--approval", "auto", *flags], env)


def test_auto_runs_pytest_unasked_in_the_sandbox(fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path) -> None:
    require_bwrap()
    done = run_tests(fake, workspace, home, fake_pytest(tmp_path / "bin"))
    assert done.code == 0, done.stderr
    [result] = done.of("tool_result")
    assert result["ok"] and "fake pytest ran" in result["output"], result
    assert (workspace / "ran.txt").exists()
    assert not done.of("notice")


def test_auto_refuses_pytest_without_the_sandbox(fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path) -> None:
    done = run_tests(fake, workspace, home, fake_pytest(tmp_path / "bin"), "--sandbox", "off")
    assert done.code == 0, done.stderr
    [result] = done.of("tool_result")
    assert not result["ok"] and "approval mode is auto" in result["output"]
    assert not (workspace / "ran.txt").exists()


def broken_bwrap(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "bwrap"
    program.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    program.chmod(0o755)
    return str(folder)


def test_a_broken_bwrap_means_auto_falls_back_with_one_notice(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    path = broken_bwrap(tmp_path / "stub") + os.pathsep + fake_pytest(tmp_path / "bin")
    done = run_tests(fake, workspace, home, path)
    assert done.code == 0, done.stderr
    [notice] = done.of("notice")
    assert notice["level"] == "warning" and "commands run without a sandbox" in notice["message"]
    assert "Operation not permitted" in notice["message"]
    [result] = done.of("tool_result")
    assert not result["ok"] and "approval mode is auto" in result["output"]  # uncontained: asks, so refused


def test_a_broken_bwrap_makes_sandbox_bwrap_fail_clearly(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    path = broken_bwrap(tmp_path / "stub") + os.pathsep + os.environ.get("PATH", os.defpath)
    done = run_tests(fake, workspace, home, path, "--sandbox", "bwrap")
    assert done.code == 2
    assert "--sandbox bwrap: bwrap is installed but failed" in done.stderr and "Operation not permitted" in done.stderr
    assert fake.requests == []


def test_a_repository_cannot_switch_the_sandbox_off_until_trusted(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    (workspace / ".paicli").mkdir()
    (workspace / ".paicli" / "config.toml").write_text(
        'sandbox = "off"\nsandbox_network = true\nsandbox_writable = ["~"]\nunsandboxed = ["pytest"]\n'
    )
    done = run_tests(fake, workspace, home, fake_pytest(tmp_path / "bin"))
    assert done.code == 0, done.stderr
    assert "ignoring sandbox, sandbox_network, sandbox_writable, unsandboxed" in done.stderr
    [result] = done.of("tool_result")
    assert result["ok"] and "fake pytest ran" in result["output"]  # contained, so it ran unasked


def test_a_command_task_that_writes_outside_its_declared_files_fails_plainly(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """The plan contract for commands (issue 12 item 5), end to end: `paicli plan --yes` with a COMMAND
    task that declares `dist/` and writes beside it."""
    require_bwrap()
    command = "mkdir -p dist && echo b > dist/bundle.js && echo x > notes.txt"
    plan = {
        "summary": "build",
        "tasks": [
            {
                "id": "build",
                "description": "build it",
                "type": "COMMAND",
                "dependencies": [],
                "files": ["dist/"],
                "action": {"tool": "execute_command", "args": {"command": command}},
            },
        ],
    }
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    env = paicli_env(fake, home)
    done = run_paicli(["-C", str(workspace), "plan", "build it", "--yes", "--json", "--max-replans", "0"], env)
    assert done.code == 1, done.stderr
    [finished] = [e for e in done.of("task_finished") if e["task_id"] == "build"]
    assert finished["status"] == "FAILED"
    assert "this task's declared files (dist/)" in finished["error"], finished
    assert (workspace / "dist" / "bundle.js").exists() and not (workspace / "notes.txt").exists()


def test_a_git_dir_a_command_made_is_removed_with_a_notice(fake: FakeLLM, workspace: Path, home: Path) -> None:
    require_bwrap()
    fake.on(has_tool_result("execute_command"), Reply.text("done"))
    fake.on("make a repo", Reply.tool_calls([("execute_command", {"command": "git init -q sub && echo made"})]))
    env = paicli_env(fake, home)
    done = run_paicli(["-C", str(workspace), "run", "make a repo", "--json", "--approval", "auto"], env)
    assert done.code == 0, done.stderr
    [result] = done.of("tool_result")
    assert "made" in result["output"] and "[sandbox] removed sub/.git" in result["output"], result
    [notice] = [n for n in done.of("notice") if "sub/.git" in n["message"]]
    assert notice["level"] == "warning" and notice["message"].startswith("sandbox: removed sub/.git")
    assert "\n" not in notice["message"] and not (workspace / "sub" / ".git").exists()
