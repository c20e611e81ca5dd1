"""`!command` in the REPL, through a real pseudo-terminal: runs without the model, joins the conversation."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
ESC = "\x1b"


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def send_line(child: pexpect.spawn, text: str) -> None:
    child.send(text)
    child.send(ENTER)


def test_bang_runs_the_command_without_the_model_and_the_next_request_carries_it(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "marker.txt").write_text("x")
    fake.on("what did it print", Reply.text("It printed a greeting."))
    child = spawn_repl()
    send_line(child, '!echo hello-""from-bang; ls')
    expect_text(child, "hello-from-bang")
    expect_text(child, "marker.txt")  # it ran in the workspace
    expect_text(child, "exit code 0")
    child.expect_exact(PROMPT)
    assert fake.requests == []
    send_line(child, "what did it print")
    expect_text(child, "It printed a greeting.")
    users = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]
    assert len(users) == 2
    assert 'echo hello-""from-bang; ls' in users[0]
    assert "hello-from-bang" in users[0] and "marker.txt" in users[0] and "exit code 0" in users[0]
    assert users[1] == "what did it print"


def test_bang_output_is_masked_like_tool_output(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("next", Reply.text("Fine."))
    child = spawn_repl()
    send_line(child, '!echo "key=te""st-key"; env | grep -c PAICLI_API_KEY')
    expect_text(child, "key=***")
    child.expect_exact(PROMPT)
    send_line(child, "next")
    expect_text(child, "Fine.")
    shell = next(m["content"] for m in fake.requests[-1].messages if m["role"] == "user")
    assert "key=***" in shell and "test-key" not in shell
    assert "\n0\n" in shell  # the key is not in the command's environment


def test_bang_with_a_denied_command_is_refused(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    fake.on("after", Reply.text("After."))
    child = spawn_repl()
    send_line(child, "!rm -rf /")
    expect_text(child, "refused:")
    child.expect_exact(PROMPT)
    send_line(child, "after")
    expect_text(child, "After.")
    assert [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"] == ["after"]


def test_esc_stops_a_long_command_and_kills_its_group(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    child = spawn_repl()
    send_line(child, '!sleep 30 & echo "$!" > pid.txt; echo go-ahead""-now; wait')
    expect_text(child, "go-ahead-now")  # the output, not the echoed command line
    child.send(ESC)
    expect_text(child, "stopped by the user", timeout=10)
    child.expect_exact(PROMPT, timeout=10)
    sleeper = int((workspace / "pid.txt").read_text())
    assert not running(sleeper)  # killed with its group (a zombie not yet reaped counts as gone)
    assert fake.requests == []
    child.sendeof()
    child.expect(pexpect.EOF)
