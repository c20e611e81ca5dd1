"""What the REPL's prompt line is made of: its keys, its prompt and its bottom toolbar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from paicli.app.figures import arrows
from paicli.llm.types import Usage

if TYPE_CHECKING:
    from paicli.mcp.manager import McpManager, ServerView

PROMPT = "› "


async def ask_line(question: str) -> str:
    """A question under the REPL's output, answered with a line; "" when the user gives up (Ctrl-C, Ctrl-D)."""
    from prompt_toolkit import PromptSession

    asking: PromptSession[str] = PromptSession()
    try:
        return await asking.prompt_async(FormattedText([("ansiyellow", question)]))
    except (EOFError, KeyboardInterrupt):
        return ""


def prompt_keys() -> KeyBindings:
    """Enter sends; Alt+Enter (Esc then Enter) inserts a newline; Ctrl-L clears the screen. (Ctrl-R searches
    the history and a bracketed paste stays one message: prompt_toolkit's own bindings.)"""
    keys = KeyBindings()

    @keys.add("c-l")
    def _clear(event: KeyPressEvent) -> None:
        event.app.renderer.clear()

    @keys.add("enter", filter=~is_searching)
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys



def prompt_text(*, planning: bool) -> FormattedText:
    """`› `, or `plan› ` when the next message is planned."""
    if planning:
        return FormattedText([("bold ansimagenta", "plan" + PROMPT)])
    return FormattedText([("bold ansicyan", PROMPT)])


def toolbar_text(model: str, usage: Usage, mcp: McpManager | None) -> FormattedText:
    servers = f" · {mcp_summary(mcp.views())}" if mcp is not None else ""
    return FormattedText([("", f" {model} · {arrows(usage)} tokens{servers} · /help")])


def mcp_summary(views: list[ServerView]) -> str:
    """`MCP 2/3` (ready of enabled), with `starting` or `1 failed` when it applies."""
    enabled = [view for view in views if view.status != "disabled"]
    ready = sum(view.status == "ready" for view in enabled)
    text = f"MCP {ready}/{len(enabled)}"
    if starting := sum(view.status == "starting" for view in enabled):
        text += f" ({starting} starting)"
    if failed := sum(view.status == "failed" for view in enabled):
        text += f" ({failed} failed: /mcp)"
    return text
