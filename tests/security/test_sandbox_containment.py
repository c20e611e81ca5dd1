"""The seven known holes of the classifier (issue 12), run for real with the sandbox on: the classifier's
verdicts stay as they are (tests/security/test_command_catalogue.py keeps its strict xfails), and the
kernel contains what the commands do. Each command also leaves a `setsid sleep` behind, which must be
gone when it returns.

Interpreter code (`python3 -c`, `perl -e`) and the setsid child run through the real gate in yolo mode.
The others are on the hard denylist now, so the gate would never run them: they run straight through
execute_command's process runner inside the sandbox, to prove the wall holds where the door would not.
Targets are the test's own (a fake home, a device name of its own, a server on 127.0.0.1), so a broken
sandbox fails the test without harming the machine: never `/`, `~` or a real disk.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from paicli.llm.types import ToolCall
from paicli.policy.approval import ApprovalPolicy
from paicli.sandbox import BwrapSandbox
from paicli.tools.base import ToolContext
from paicli.tools.builtin.execute_command import run_in_group
from paicli.tools.output import HeadTailBuffer
from paicli.tools.toolbox import ToolBox
from tests.sandboxing import bwrap_sandbox, http_server, marker, processes_with


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key\n")
    (home / "work").mkdir()
    (home / "work" / "thesis.tex").write_text("years of it\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def sandbox(workspace: Path, home: Path) -> BwrapSandbox:
    return bwrap_sandbox(workspace, home)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


async def through_the_gate_in_yolo(workspace: Path, sandbox: BwrapSandbox, command: str) -> str:
    box = ToolBox.default(gate=ApprovalPolicy(workspace, mode="yolo"))
    ctx = ToolContext(workspace, sandbox=sandbox, command_timeout=30)
    call = ToolCall(id="c", name="execute_command", arguments=json.dumps({"command": command}))
    outcome = await box.execute(call, ctx)
    return outcome.output


async def in_the_sandbox(workspace: Path, sandbox: BwrapSandbox, command: str) -> str:
    buffer = HeadTailBuffer(head_bytes=20_000, tail_bytes=20_000)
    code, timed_out = await run_in_group(command, ToolContext(workspace, sandbox=sandbox), buffer, 30)
    assert not timed_out
    return f"{buffer.render(20_000)}\nexit code {code}"


def leaves_a_child(command: str, duration: str) -> str:
    return f"(setsid sleep {duration} > /dev/null 2>&1 &); {command}"


INTERPRETERS = [
    "python3 -c \"import os, shutil; shutil.rmtree(os.path.expanduser('~'))\"",
    "perl -e 'system(\"rm -rf $ENV{HOME}\")'",
]


@pytest.mark.parametrize("command", INTERPRETERS, ids=["python-rmtree", "perl-system-rm"])
async def test_interpreter_code_in_yolo_cannot_touch_the_home_folder(
    workspace: Path, home: Path, sandbox: BwrapSandbox, command: str
) -> None:
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} is not installed")
    before, duration = snapshot(home), marker()
    output = await through_the_gate_in_yolo(workspace, sandbox, leaves_a_child(command, duration))
    assert "Read-only file system" in output, output
    assert snapshot(home) == before
    assert processes_with(duration) == []


async def test_rsync_delete_of_home(workspace: Path, home: Path, sandbox: BwrapSandbox) -> None:
    if shutil.which("rsync") is None:
        pytest.skip("rsync is not installed")
    before, duration = snapshot(home), marker()
    command = leaves_a_child("mkdir -p empty && rsync -a --delete empty/ ~/", duration)
    output = await in_the_sandbox(workspace, sandbox, command)
    assert not output.endswith("exit code 0"), output
    assert snapshot(home) == before
    assert processes_with(duration) == []


async def test_moving_home_away(workspace: Path, home: Path, sandbox: BwrapSandbox) -> None:
    before, duration, gone = snapshot(home), marker(), Path(f"/tmp/paicli-gone-{marker()}")
    try:
        output = await in_the_sandbox(workspace, sandbox, leaves_a_child(f'mv "$HOME" {gone}', duration))
        assert not output.endswith("exit code 0"), output
        assert snapshot(home) == before and not gone.exists()
        assert processes_with(duration) == []
    finally:
        shutil.rmtree(gone, ignore_errors=True)


async def test_copying_onto_a_device(workspace: Path, sandbox: BwrapSandbox) -> None:
    device, duration = Path(f"/dev/paicli-test-{marker()}"), marker()
    command = f"find /dev -type b | wc -l; head -c 1M /dev/zero > {device}; cp /dev/null {device}"
    try:
        output = await in_the_sandbox(workspace, sandbox, leaves_a_child(command, duration))
        assert output.splitlines()[0] == "0", output  # no disk to write to in there
        assert "Read-only file system" in output and not output.endswith("exit code 0"), output
        assert not device.exists()
        assert processes_with(duration) == []
    finally:
        if device.is_file():
            device.unlink()


async def test_download_then_run_through_a_file(workspace: Path, home: Path, sandbox: BwrapSandbox) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    script, duration = Path(f"/tmp/paicli-s-{marker()}"), marker()
    with http_server(b"touch $HOME/pwned\n") as (port, requested):
        command = f"curl -fsS -o {script} http://127.0.0.1:{port}/x; sh {script}"
        try:
            output = await in_the_sandbox(workspace, sandbox, leaves_a_child(command, duration))
            assert not output.endswith("exit code 0"), output
            assert requested == [] and not script.exists() and not (home / "pwned").exists()
            assert processes_with(duration) == []
        finally:
            if script.exists():
                script.unlink()


async def test_a_setsid_child_in_yolo_does_not_outlive_its_command(workspace: Path, sandbox: BwrapSandbox) -> None:
    duration = marker()
    output = await through_the_gate_in_yolo(
        workspace, sandbox, f"setsid sleep {duration} > /dev/null 2>&1 & sleep 0.2; echo started"
    )
    assert "started" in output and output.endswith("exit code 0"), output
    assert processes_with(duration) == []
    assert os.path.isdir(workspace)
