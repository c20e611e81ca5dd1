"""MCP tools in the gate: risky by default in every mode, allow and deny rules naming them by pattern
(deny wins), the read-only hint of a trusted server, and the plan contract's scope and actions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest

from paicli.mcp.tool import McpTool, make_tool
from paicli.plan.contract import Contract, scope_of
from paicli.plan.model import Plan, Task, TaskAction, TaskType
from paicli.policy.approval import Decision
from paicli.policy.rules import parse_rule
from paicli.tools.base import ToolContext
from tests.policy.test_approval import YES, ScriptedUser, policy_for


async def never(name: str, arguments: dict[str, Any]) -> Any:
    raise AssertionError("not called")


def mcp_tool(name: str = "mcp__git__git_commit", *, read_only: bool = False) -> McpTool:
    remote = types.Tool(
        name=name.split("__")[-1],
        input_schema={"type": "object", "properties": {"m": {}}},
        annotations=types.ToolAnnotations(read_only_hint=True) if read_only else None,
    )
    tool, _ = make_tool(name.split("__")[1], name, remote, never, trust_annotations=read_only)
    return tool


async def decide(policy: Any, tool: McpTool, user: ScriptedUser | None = None) -> Decision:
    ctx = ToolContext(workspace=policy.workspace, approve=user)
    return (await policy.decide(tool, {"m": "x"}, ctx)).decision


async def test_a_risky_mcp_tool_asks_in_ask_refuses_in_auto_and_runs_in_yolo(workspace: Path) -> None:
    tool = mcp_tool()
    user = ScriptedUser(YES)
    assert await decide(policy_for(workspace, "ask"), tool, user) is Decision.APPROVED_BY_USER
    assert user.asked[0].tool == "mcp__git__git_commit" and "mcp__git__git_commit" in user.asked[0].summary
    refused = await policy_for(workspace, "auto").decide(tool, {"m": "x"}, ToolContext(workspace=workspace))
    assert refused.decision is Decision.REFUSED_BY_POLICY
    assert 'allow = ["mcp__git__git_commit"]' in refused.message
    assert await decide(policy_for(workspace, "yolo"), tool) is Decision.APPROVED_BY_MODE


@pytest.mark.parametrize("rule", ["mcp__git__*", "mcp__git__git_commit", "mcp__*__git_c?mmit", "mcp__git__git_[a-c]*"])
async def test_an_allow_rule_naming_it_lets_auto_run_it(workspace: Path, rule: str) -> None:
    assert await decide(policy_for(workspace, "auto", allow=[rule]), mcp_tool()) is Decision.APPROVED_BY_RULE


async def test_a_pattern_does_not_reach_other_servers_or_built_in_tools(workspace: Path) -> None:
    policy = policy_for(workspace, "auto", allow=["mcp__git__*"])
    assert await decide(policy, mcp_tool("mcp__gitlab__merge")) is Decision.REFUSED_BY_POLICY
    ctx = ToolContext(workspace=workspace)
    ruling = await policy.decide("execute_command", {"command": "mcp__git__x"}, ctx)
    assert ruling.decision is not Decision.APPROVED_BY_RULE


async def test_deny_wins_over_allow_in_every_mode(workspace: Path) -> None:
    for mode in ("ask", "auto", "yolo"):
        policy = policy_for(workspace, mode, allow=["mcp__git__*"], deny=["mcp__git__git_commit"])  # type: ignore[arg-type]
        assert await decide(policy, mcp_tool(), ScriptedUser(YES)) is Decision.REFUSED_BY_RULE
        assert (await decide(policy, mcp_tool("mcp__git__git_log"))).allowed  # yolo: by mode, else by the rule
    deny_all = policy_for(workspace, "yolo", deny=["mcp__*"])
    assert await decide(deny_all, mcp_tool("mcp__git__git_log", read_only=True)) is Decision.REFUSED_BY_RULE


async def test_a_trusted_read_only_hint_runs_like_read_file(workspace: Path) -> None:
    reader = mcp_tool("mcp__git__git_log", read_only=True)
    assert await decide(policy_for(workspace, "auto"), reader) is Decision.ALLOWED


@pytest.mark.parametrize(
    ("text", "message"),
    [("mcp__git__x(a)", "without (...)"), ("mcp__git x", "one word"), ("mcp__a;rm", "one word")],
)
def test_bad_tool_patterns_are_configuration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rule(text)


def task(task_type: TaskType, action: str | None = None) -> Task:
    return Task(
        id="t1", description="d", type=task_type, action=TaskAction(tool=action, args={"m": "x"}) if action else None
    )


async def test_the_plan_scope_treats_read_only_mcp_tools_as_reads_and_others_as_commands(workspace: Path) -> None:
    policy = policy_for(workspace, "yolo")
    reader, writer = mcp_tool("mcp__git__git_log", read_only=True), mcp_tool()
    for kind, reads, runs in [
        (TaskType.FILE_READ, True, False),
        (TaskType.ANALYSIS, True, False),
        (TaskType.FILE_WRITE, True, False),
        (TaskType.COMMAND, True, True),
        (TaskType.VERIFICATION, True, False),  # a check changes nothing it cannot see (issue 29)
    ]:
        ctx = ToolContext(workspace=workspace, scope=scope_of(task(kind)))
        assert (await policy.decide(reader, {}, ctx)).allowed is reads, kind
        ruling = await policy.decide(writer, {}, ctx)
        assert ruling.allowed is runs, kind
        if not runs:
            assert ruling.decision is Decision.REFUSED_OUT_OF_SCOPE
            assert "Say in your answer what must" in ruling.message


def test_mcp_tools_as_direct_actions_follow_the_contract(workspace: Path) -> None:
    tools = {tool.name: tool for tool in (mcp_tool("mcp__git__git_log", read_only=True), mcp_tool())}
    contract = Contract(workspace, tools.get)

    def problems(kind: TaskType, action: str) -> list[str]:
        return contract.problems(Plan(goal="g", tasks=[task(kind, action)]))

    assert problems(TaskType.FILE_READ, "mcp__git__git_log") == []
    assert problems(TaskType.COMMAND, "mcp__git__git_commit") == []
    (wrong,) = problems(TaskType.VERIFICATION, "mcp__git__git_commit")  # the gate would refuse it (issue 29)
    assert wrong == (
        'task "t1" is VERIFICATION: its action mcp__git__git_commit may change things outside paicli\'s view and '
        "names no workspace path; only a COMMAND task may run it"
    )
    (wrong,) = problems(TaskType.FILE_READ, "mcp__git__git_commit")
    assert "its action must be a read-only tool, not mcp__git__git_commit" in wrong
    assert "unknown tool 'mcp__git__nope'" in problems(TaskType.COMMAND, "mcp__git__nope")[0]


@pytest.mark.parametrize(
    "args",
    [
        {"m": "x"},  # names nothing
        {"path": "README.md"},  # a workspace file the task does not declare
        {"m": "README.md"},  # the same, under an argument name that says nothing
        {"uri": "file://{ws}/lib/app.py"},  # a path outside src/, named as a URI
        {"nested": [{"target": "../{name}/README.md"}]},  # back into the workspace from above
        {"path": "src/../README.md"},  # out of the declared folder by `..`
        {"path": "."},  # the whole workspace
    ],
)
def test_a_checks_action_calling_a_risky_mcp_tool_is_refused_up_front(workspace: Path, args: dict[str, Any]) -> None:
    """What the gate would refuse when the task ran, the contract refuses before the plan runs, in the one-line
    style of its other problems; the same call in a COMMAND task that may write anywhere (`./`) is fine."""
    (workspace / "README.md").write_text("r\n")
    (workspace / "src").mkdir()
    filled = json.loads(json.dumps(args).replace("{ws}", str(workspace)).replace("{name}", workspace.name))
    contract = Contract(workspace, {"mcp__git__git_commit": mcp_tool()}.get)
    for files in (None, ["src/"]):
        check = Task(
            id="check",
            description="d",
            type=TaskType.VERIFICATION,
            files=files,
            action=TaskAction(tool="mcp__git__git_commit", args=filled),
        )
        (problem,) = contract.problems(Plan(goal="g", tasks=[check]))
        assert problem.startswith('task "check" is VERIFICATION: its action mcp__git__git_commit may change'), problem
        assert "\n" not in problem
    command = Task(
        id="c",
        description="d",
        type=TaskType.COMMAND,
        files=["./"],
        action=TaskAction(tool="mcp__git__git_commit", args=filled),
    )
    assert contract.problems(Plan(goal="g", tasks=[command])) == []


def test_a_risky_mcp_action_on_the_tasks_own_files_passes_as_in_the_gate(workspace: Path) -> None:
    (workspace / "src").mkdir()
    contract = Contract(workspace, {"mcp__git__git_commit": mcp_tool()}.get)
    for kind in (TaskType.VERIFICATION, TaskType.COMMAND):
        task_ = Task(
            id="t",
            description="d",
            type=kind,
            files=["src/"],
            action=TaskAction(tool="mcp__git__git_commit", args={"path": "src/report.txt"}),
        )
        assert contract.problems(Plan(goal="g", tasks=[task_])) == []
    elsewhere = TaskAction(tool="mcp__git__git_commit", args={"path": "notes.txt"})
    command = Task(id="t", description="d", type=TaskType.COMMAND, files=["src/"], action=elsewhere)
    (problem,) = contract.problems(Plan(goal="g", tasks=[command]))
    assert problem.endswith('here notes.txt, which the task does not declare in "files"')
