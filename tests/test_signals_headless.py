"""SIGTERM and SIGINT end paicli within about a second whatever a tool is doing: a grep over large files (in
process, in a thread that nobody waits for, or with rg as a subprocess killed with its group), or a slow
command. A plan from a file whose one task is a direct action runs the tool without a model request; the
signal comes once the tool has started, and paicli exits 130 (cancelled, docs/contract.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import paicli_env, start_paicli
from tests.fakellm import FakeLLM

BUSY_FILES = 4
BUSY_LINES = 2_000_000  # "a\n" lines: seconds of matching in process for each file


def plan_file(folder: Path, action: dict[str, object], kind: str) -> Path:
    path = folder / "plan.json"
    task = {"id": "busy", "description": "busy", "type": kind, "dependencies": [], "action": action}
    path.write_text(json.dumps({"summary": "one busy tool", "tasks": [task]}))
    return path


def path_without_rg(folder: Path) -> str:
    """A PATH that has git and bash but no rg: grep_code then searches in process."""
    folder.mkdir()
    for program in ("git", "bash", "sh", "sleep"):
        found = shutil.which(program)
        if found:
            (folder / program).symlink_to(found)
    return str(folder)


def wait_for_event(proc: subprocess.Popen[str], name: str, timeout: float = 60) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if json.loads(line).get("event") == name:
            return
    raise AssertionError(f"no {name} event: {proc.poll()}")


@pytest.mark.parametrize(
    ("case", "sig"),
    [
        ("grep in process", signal.SIGTERM),
        ("grep in process", signal.SIGINT),
        ("grep with rg", signal.SIGTERM),
        ("a slow command", signal.SIGTERM),
    ],
)
def test_a_signal_ends_paicli_within_a_second_whatever_a_tool_is_doing(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, case: str, sig: signal.Signals
) -> None:
    env = paicli_env(fake, home)
    if case == "a slow command":
        plan = plan_file(tmp_path, {"tool": "execute_command", "args": {"command": "sleep 60"}}, "COMMAND")
    else:
        if case == "grep with rg" and shutil.which("rg") is None:
            pytest.skip("rg is not on PATH")
        if case == "grep in process":
            env["PATH"] = path_without_rg(tmp_path / "bin")
        for n in range(BUSY_FILES):
            (workspace / f"big{n}.txt").write_bytes(b"a\n" * BUSY_LINES)
        plan = plan_file(tmp_path, {"tool": "grep_code", "args": {"pattern": "a"}}, "FILE_READ")
    running = start_paicli(["-C", str(workspace), "plan", "--from", str(plan), "--yes", "--json"], env)
    try:
        wait_for_event(running, "tool_call")
        time.sleep(0.5)  # the tool is well into its work
        assert running.poll() is None, "the tool finished before the signal: make it slower"
        sent = time.monotonic()
        running.send_signal(sig)
        running.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 130
    assert elapsed < 1.5, elapsed  # about a second, on a loaded 2-core machine
    assert not [pid for pid in _children_of(running.pid)], "a process of the tool outlived paicli"


def _children_of(pid: int) -> list[int]:
    """Processes whose parent was paicli and that still run (a killed group leaves none)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat_line.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry))
    return found
