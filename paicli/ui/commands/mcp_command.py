"""`/mcp`: the MCP servers with their status, tool count and, for a failed one, why and the last lines
of its stderr; `/mcp restart NAME` stops a server if it runs and starts it again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paicli.common.sanitize import terminal_safe
from paicli.ui.commands.context import CommandContext, Outcome

if TYPE_CHECKING:
    from paicli.mcp.manager import McpManager, ServerView

STDERR_SHOWN = 5
STYLES = {"ready": "green", "starting": "yellow", "failed": "red", "stopped": "dim", "disabled": "dim"}
USAGE = "usage: /mcp [restart NAME]"


def server_lines(views: list[ServerView]) -> list[tuple[str, str]]:
    """(text, style) lines describing every server; every server-made string goes through the sanitizer."""
    if not views:
        return [("no MCP servers are configured ([mcp_servers.NAME] in a config file, or .mcp.json)", "dim")]
    width = max(len(view.name) for view in views)
    lines: list[tuple[str, str]] = []
    for view in views:
        tools = f"{view.tools} tool{'s' if view.tools != 1 else ''}"
        detail = f"  {terminal_safe(view.detail)}" if view.detail else ""
        lines.append(
            (
                f"  {view.name:<{width}}  {view.status:<8}  {view.transport:<5}  {tools}{detail}",
                STYLES.get(view.status, ""),
            )
        )
        pad = " " * (width + 4)
        if view.status == "failed":
            lines += [(f"{pad}stderr: {terminal_safe(line)}", "dim") for line in view.stderr[-STDERR_SHOWN:]]
        lines += [(f"{pad}{terminal_safe(note)}", "dim") for note in view.notes]
    return lines


async def mcp_command(manager: McpManager | None, arg: str) -> list[tuple[str, str]]:
    words = arg.split()
    if not words:
        lines = server_lines(manager.views() if manager is not None else [])
        return lines + ([("/mcp restart NAME starts a server again", "dim")] if manager is not None else [])
    if words[0] != "restart" or len(words) != 2:
        return [(USAGE, "red")]
    server = manager.server(words[1]) if manager is not None else None
    if server is None:
        known = ", ".join(manager.servers) if manager is not None else "none"
        return [(f"no MCP server is named {terminal_safe(words[1])} (the servers: {known})", "red")]
    if not server.config.enabled:
        return [(f"{server.name} is disabled (enabled = false)", "red")]
    await server.restart()
    return server_lines([server.view()])


async def mcp_slash(ctx: CommandContext, arg: str) -> Outcome:
    for text, style in await mcp_command(ctx.mcp, arg):
        ctx.say(text, style)
    return Outcome.CONTINUE
