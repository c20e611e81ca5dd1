"""Issue 27, finding 1, through the real tool box and policy: code hidden in expansion operands and in
arithmetic ran unasked in `auto` and in `ask` (audit: allowed) with the sandbox off, and in yolo walked
around the hard denylist. Now none of it runs unless a person says yes, in every mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paicli.policy.audit import read_entries
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result

PAYLOADS = [
    "echo ${X:-`touch pwned`}",
    'echo "${HOME+`touch pwned`}"',
    "echo ${x:-<(touch pwned)}",
    "[[ a == ${x:-`touch pwned`} ]]",
    "cat <<EOF\n${x:-`touch pwned`}\nEOF",
    "echo $(( '$(touch pwned; echo 1)' ))",
    "echo $[ '$(touch pwned; echo 1)' ]",
    "(( '$(touch pwned; echo 1)' ))",
    "echo \"${v:-'$(touch pwned)'}\"",
    "ls ${x:-${y:-$(touch pwned)}}",
]


class Asker:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request.summary)
        return ApprovalDecision(allowed=self.answer, how="user")


@pytest.mark.parametrize("command", PAYLOADS)
@pytest.mark.parametrize("mode", ["auto", "yolo"])
async def test_without_a_person_nothing_hidden_in_an_operand_runs(
    session_factory: Any, workspace: Path, tmp_path: Path, mode: str, command: str
) -> None:
    outcome = await session_factory(mode).run(command)
    assert not outcome.ok and outcome.output.startswith("Error: refused")
    assert not (workspace / "pwned").exists()
    [entry] = read_entries(tmp_path / "audit", 5)
    assert entry["decision"] == "refused_by_policy"


# not `<(...)`: it runs in the background, after the command may have returned
@pytest.mark.parametrize("command", [PAYLOADS[0], PAYLOADS[1], PAYLOADS[3], PAYLOADS[5]])
async def test_ask_mode_asks_and_a_yes_runs_it(session_factory: Any, workspace: Path, command: str) -> None:
    no = Asker(False)
    session = session_factory("ask", no)
    session.ctx = ToolContext(workspace, task_id="task_1", approve=no, command_timeout=20)
    assert not (await session.run(command)).ok and no.asked and not (workspace / "pwned").exists()
    yes = Asker(True)
    session = session_factory("ask", yes)
    assert (await session.run(command)).ok and (workspace / "pwned").exists()


@pytest.mark.parametrize(
    "command", ["echo ${X:-`mkfs.ext4 -q -F img`}", 'echo "${X:+$(mkfs.ext4 -q -F img)}"', "echo ${X-`dd of=/dev/sda`}"]
)
async def test_yolo_does_not_walk_around_the_denylist_through_an_operand(
    session_factory: Any, workspace: Path, command: str
) -> None:
    (workspace / "img").write_bytes(b"\0" * 4096)
    outcome = await session_factory("yolo").run(command)
    assert not outcome.ok and "refused" in outcome.output
    assert (workspace / "img").read_bytes() == b"\0" * 4096


def test_a_headless_run_without_the_sandbox_refuses_it(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """The reproduction as the red team ran it: `paicli run` in auto mode, `--sandbox off`."""
    fake.on(has_tool_result("execute_command"), Reply.text("done"))
    fake.on("go", Reply.tool_calls([("execute_command", {"command": "echo ${X:-`touch pwned`}"})]))
    done = run_paicli(["-C", str(workspace), "run", "go", "--json", "--sandbox", "off"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    [result] = done.of("tool_result")
    assert result["ok"] is False and "substitution" in result["output"] + done.stdout
    assert not (workspace / "pwned").exists()
