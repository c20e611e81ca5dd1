"""A command the sandbox stopped, through the real tool box and gate with real bubblewrap: the result says
so plainly; in `ask` mode the user's yes runs it once outside; `auto` and `yolo` keep it refused; the
audit log records each step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paicli.llm.types import ToolCall
from paicli.policy.approval import ApprovalPolicy, Mode
from paicli.policy.audit import AuditLog
from paicli.sandbox import BwrapSandbox
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox
from tests.policy.test_approval import ALWAYS, YES, ScriptedUser
from tests.repos import git_init


def box(workspace: Path, mode: Mode, audit: Path, unsandboxed: tuple[str, ...] = ()) -> ToolBox:
    policy = ApprovalPolicy(workspace, mode=mode, audit=AuditLog(audit, workspace=workspace), unsandboxed=unsandboxed)
    return ToolBox.default(gate=policy)


async def command(tools: ToolBox, ctx: ToolContext, line: str) -> tuple[bool, str]:
    call = ToolCall(id="c", name="execute_command", arguments=json.dumps({"command": line}))
    outcome = await tools.execute(call, ctx)
    return outcome.ok, outcome.output


def decisions(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]


@pytest.fixture
def repository(workspace: Path) -> Path:
    git_init(workspace)
    (workspace / "a.txt").write_text("a\n")
    return workspace


async def test_ask_mode_offers_to_run_it_outside_and_a_yes_runs_it(
    repository: Path, sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    user = ScriptedUser(YES)
    tools = box(repository, "ask", tmp_path / "audit")
    ok, output = await command(tools, ToolContext(repository, approve=user, sandbox=sandbox), "git add a.txt")
    assert ok and output.endswith("exit code 0"), output
    assert "failed in the sandbox (a write was refused" in output and "the user let it run outside" in output
    assert len(user.asked) == 1 and getattr(user.asked[0], "outside", False)
    staged = (repository / ".git" / "index").exists()
    assert staged
    assert [e["decision"] for e in decisions(tmp_path / "audit")] == ["allowed_in_sandbox", "outside_by_user"]


async def test_always_runs_the_prefix_outside_for_the_rest_of_the_session(
    repository: Path, sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    user = ScriptedUser(ALWAYS)
    tools = box(repository, "ask", tmp_path / "audit")
    ctx = ToolContext(repository, approve=user, sandbox=sandbox)
    await command(tools, ctx, "git add a.txt")
    ok, output = await command(tools, ctx, "git add a.txt")  # straight outside: no failure, no question
    assert ok and output.endswith("exit code 0") and "sandbox" not in output, output
    assert len(user.asked) == 1
    assert decisions(tmp_path / "audit")[-1]["decision"] == "approved_by_session"


@pytest.mark.parametrize("mode", ["auto", "yolo"])
async def test_auto_and_yolo_keep_it_refused_and_say_why(
    repository: Path, sandbox: BwrapSandbox, tmp_path: Path, mode: Mode
) -> None:
    tools = box(repository, mode, tmp_path / "audit")
    ok, output = await command(tools, ToolContext(repository, sandbox=sandbox), "git add a.txt")
    assert ok and output.endswith("exit code 128"), output  # the command ran and failed: a result, not an error
    assert "[sandbox] a write was refused" in output and "It stays refused" in output
    assert 'unsandboxed = ["git add"]' in output
    assert not (repository / ".git" / "index").exists()
    assert [e["decision"] for e in decisions(tmp_path / "audit")] == ["allowed_in_sandbox", "refused_outside"]


async def test_an_unsandboxed_prefix_runs_outside_from_the_start(
    repository: Path, sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    tools = box(repository, "yolo", tmp_path / "audit", unsandboxed=("git add",))
    ok, output = await command(tools, ToolContext(repository, sandbox=sandbox), "git add a.txt")
    assert ok and output.endswith("exit code 0") and "sandbox" not in output, output
    assert (repository / ".git" / "index").exists()
