"""What the planner is told about tools beyond the built-in seven (those of MCP servers), so a plan can
use them: one line each, with its arguments, and where the plan contract lets a task use it."""

from __future__ import annotations

from collections.abc import Iterable

from paicli.mcp.schema import one_line
from paicli.tools.base import Tool
from paicli.tools.toolbox import builtin_tool

MAX_LISTED = 100


def tool_catalogue(tools: Iterable[Tool]) -> str:
    """A section for the planner's and replanner's system prompt; "" when there are no such tools."""
    extra = [tool for tool in tools if builtin_tool(tool.name) is None]
    if not extra:
        return ""
    lines = [
        "",
        "# Tools of the user's MCP servers",
        "",
        "Besides the file and command tools, task agents can call these tools. A read-only one may be used by",
        "any task, and as the action of a FILE_READ task; any other only by COMMAND and VERIFICATION tasks, and",
        'as their action: {"tool": "mcp__…", "args": {…}} with the arguments listed (? marks optional ones).',
        "",
    ]
    for tool in extra[:MAX_LISTED]:
        kind = " (read-only)" if tool.read_only else ""
        lines.append(f"- {tool.name} {{{_arguments(tool)}}}{kind}: {one_line(tool.description)}")
    if len(extra) > MAX_LISTED:
        lines.append(f"- … and {len(extra) - MAX_LISTED} more")
    return "\n".join(lines) + "\n"


def _arguments(tool: Tool) -> str:
    parameters = tool.spec()["function"].get("parameters", {})
    properties = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    names = [name if name in required else f"{name}?" for name in properties]
    return ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
