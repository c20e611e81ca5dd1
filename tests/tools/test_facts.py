"""Facts about a tool live on the tool: the tool box, the approval policy, the rules and the display read
them there, so a new tool (an MCP tool) needs no name added to any table."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from paicli.policy.approval import ApprovalPolicy, Decision
from paicli.policy.rules import Rules
from paicli.tools.base import Effect, Tool, ToolContext
from paicli.tools.toolbox import BUILTIN_TOOLS, ToolBox

PAICLI = Path(__file__).resolve().parents[2] / "paicli"
FACTS = {  # name: (effect, confined, path argument, command argument, untrusted output)
    "read_file": (Effect.READ, True, "path", None, True),
    "write_file": (Effect.WRITE, True, "path", None, False),
    "edit_file": (Effect.WRITE, True, "path", None, False),
    "list_dir": (Effect.READ, True, "path", None, False),
    "glob_files": (Effect.READ, True, "path", None, False),
    "grep_code": (Effect.READ, True, "path", None, True),
    "execute_command": (Effect.EXECUTE, False, None, "command", True),
    "fetch_url": (Effect.NETWORK, False, "url", None, True),  # rules match the URL's host
}


def test_every_builtin_tool_states_its_facts() -> None:
    assert [tool.name for tool in BUILTIN_TOOLS] == list(FACTS)
    for tool in BUILTIN_TOOLS:
        assert (tool.effect, tool.confined, tool.path_argument, tool.command_argument, tool.untrusted_output) == FACTS[
            tool.name
        ], tool.name
        for argument in (tool.path_argument, tool.command_argument, tool.summary_argument):
            assert argument is None or argument in tool.Args.model_fields, (tool.name, argument)


def test_no_module_keeps_a_table_of_tool_names() -> None:
    """The policy, the rules and the renderers never compare with a tool's name."""
    names = set(FACTS)
    for module in (
        "policy/approval.py",
        "policy/rules.py",
        "policy/classify.py",
        "ui/chat/render.py",
        "ui/plan/live_view.py",
        "headless.py",
        "agent/react.py",
        "tools/toolbox.py",
    ):
        tree = ast.parse((PAICLI / module).read_text(encoding="utf-8"))
        constants = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)]
        strings = {value for value in constants if isinstance(value, str)}
        assert strings & names == set(), module


class DeployArgs(BaseModel):
    env: str


class Deploy(Tool):
    """A tool from elsewhere (an MCP server, say): it states its facts like any built-in tool."""

    name = "deploy"
    description = "deploy"
    Args = DeployArgs
    summary_argument: ClassVar[str | None] = "env"


class Lookup(Tool):
    name = "lookup"
    description = "look something up"
    Args = DeployArgs
    effect = Effect.READ


@pytest.mark.parametrize(
    ("tool", "mode", "decision"),
    [
        (Deploy(), "auto", Decision.REFUSED_BY_POLICY),  # may do anything: needs a yes
        (Deploy(), "yolo", Decision.APPROVED_BY_MODE),
        (Lookup(), "auto", Decision.ALLOWED),  # read-only by its own word
    ],
)
async def test_the_policy_decides_a_new_tool_by_its_facts(
    workspace: Path, tool: Tool, mode: Any, decision: Decision
) -> None:
    policy = ApprovalPolicy(workspace, mode=mode)
    assert (await policy.decide(tool, {"env": "prod"}, ToolContext(workspace))).decision is decision


async def test_rules_name_a_new_tool_and_its_summary_comes_from_it(workspace: Path) -> None:
    # `NAME()` names any tool (a bare word that is no built-in tool's name is a command prefix)
    policy = ApprovalPolicy(workspace, mode="yolo", rules=Rules(deny=["deploy()"], workspace=workspace))
    assert (await policy.decide(Deploy(), {"env": "prod"}, ToolContext(workspace))).decision is Decision.REFUSED_BY_RULE
    box = ToolBox([Deploy(), Lookup()])
    assert box.summary("deploy", {"env": "prod"}) == "prod" and box.is_read_only("lookup")
    assert not box.is_read_only("deploy")
