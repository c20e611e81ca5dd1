"""The sandbox in the REPL, through a real pseudo-terminal and real bubblewrap: the banner and `/approval`
say whether commands are contained; a command that would only ask runs unasked inside; one the sandbox
stopped is offered to run outside (y once, n keeps it refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, last_message_contains
from tests.sandboxing import require_bwrap
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def tool_results(fake: FakeLLM) -> list[str]:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "tool"]


def test_the_banner_and_approval_say_commands_are_contained(spawn_repl: Spawn) -> None:
    require_bwrap()
    child = spawn_repl()
    child.send("/approval" + ENTER)
    expect_text(child, "commands are contained (bubblewrap")
    expect_text(child, "still ask")
    child.expect_exact(PROMPT)


def test_without_the_sandbox_the_banner_says_so(spawn_repl: Spawn) -> None:
    child = spawn_repl("--sandbox", "off")
    child.send("/approval" + ENTER)
    expect_text(child, "commands are not contained (sandbox = off)")
    child.expect_exact(PROMPT)


def test_a_command_the_sandbox_stopped_is_offered_to_run_outside(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path, home: Path
) -> None:
    require_bwrap()
    outside = home / "stamps"  # the home folder is read-only in the sandbox
    outside.mkdir()
    fake.on(lambda body: body["messages"][-1]["role"] == "tool", Reply.text("Done with that."), repeat=True)
    fake.on(last_message_contains("build here"), Reply.tool_calls([("execute_command", {"command": "touch built"})]))
    fake.on(
        last_message_contains("stamp one"), Reply.tool_calls([("execute_command", {"command": f"touch {outside}/one"})])
    )
    fake.on(
        last_message_contains("stamp two"), Reply.tool_calls([("execute_command", {"command": f"touch {outside}/two"})])
    )
    child = spawn_repl()
    child.send("build here" + ENTER)  # would ask without the sandbox; runs unasked inside it
    expect_text(child, "Done with that.")
    child.expect_exact(PROMPT)
    assert (workspace / "built").exists()

    child.send("stamp one" + ENTER)
    expect_text(child, "run outside the sandbox, with your full rights: execute_command")
    expect_text(child, "a write was refused")
    child.send("y")
    expect_text(child, "Done with that.")
    child.expect_exact(PROMPT)
    assert (outside / "one").exists()
    assert "the user let it run outside" in tool_results(fake)[-1]

    child.send("stamp two" + ENTER)
    expect_text(child, "run outside the sandbox, with your full rights: execute_command")
    child.send("n")
    expect_text(child, "reason for the model")
    child.send(ENTER)
    expect_text(child, "Done with that.")
    assert not (outside / "two").exists()
    result = tool_results(fake)[-1]
    assert "[sandbox] a write was refused" in result and "chose not to run it outside the sandbox" in result
