"""A signal while a large plan is being checked cancels it like any other moment (issue 29, finding 7):
SIGTERM and SIGINT exit 130, never 143 or a traceback. The signal is sent as soon as paicli catches
SIGTERM (its mask in /proc says so), while a 10,000-task `--from` plan is read and checked."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import paicli_env, start_paicli
from tests.fakellm import FakeLLM

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGTERM_BIT)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_a_large_plan_is_checked_exits_130(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, signum: int
) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to see when paicli listens")
    (workspace / "a.txt").write_text("a\n")
    tasks = [
        {
            "id": f"t{i}",
            "description": "w",
            "type": "FILE_WRITE",
            "files": ["a.txt"],
            "dependencies": [f"t{i - 1}"] if i else [],
        }
        for i in range(10_000)
    ]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"summary": "big", "tasks": tasks}))
    args = [
        "-C",
        str(workspace),
        "plan",
        "--from",
        str(plan_file),
        "--yes",
        "--json",
        "--no-review",
        "--sandbox",
        "off",
    ]
    proc = start_paicli(args, paicli_env(fake, home))
    deadline = time.monotonic() + 30
    while not catches_sigterm(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "plan_created" not in stdout  # it came while the plan was being checked, before it was shown
    assert "Traceback" not in stderr
    assert (workspace / "a.txt").read_text() == "a\n"
