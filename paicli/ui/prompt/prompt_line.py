"""What the REPL's prompt line is made of: its keys, its prompt and its bottom toolbar."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from paicli.app.figures import arrows
from paicli.common.values import Usage
from paicli.llm.types import Message
from paicli.ui.prompt.keys import CHORD_WAIT, ESCAPE_WAIT

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from paicli.mcp.manager import McpManager, ServerView
    from paicli.policy.approval import ApprovalPolicy, Mode
    from paicli.sandbox import SandboxChoice

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
    """Enter sends; Alt+Enter (ESC and Enter in one read) or Ctrl+J inserts a newline; Ctrl-L clears the screen. (Ctrl-R
    searches the history and a bracketed paste stays one message: prompt_toolkit's own bindings.)"""
    keys = KeyBindings()

    @keys.add("c-l")
    def _clear(event: KeyPressEvent) -> None:
        event.app.renderer.clear()

    @keys.add("enter", filter=~is_searching)
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @keys.add("escape", "enter")
    @keys.add("c-j", filter=~is_searching)  # a line feed: prompt_toolkit would take it for Enter
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys


class ModeHolder(Protocol):
    """Where the approval mode lives: the ApprovalPolicy, or a `PendingMode` until the policy is built."""

    mode: Mode | None


@dataclass
class PendingMode:
    mode: Mode | None  # as the settings say, until the user changes it at the first prompt


class ModeSwitch:
    """Shift+Tab cycles the approval mode ask → auto → yolo → ask. Yolo runs commands unasked, so it takes a
    second Shift+Tab to confirm (the toolbar says so); ESC or typing keeps the mode as it was."""

    def __init__(self, policy: ModeHolder | None) -> None:
        self.policy = policy
        self.confirming = False  # Shift+Tab pressed once towards yolo

    def attach(self, policy: ApprovalPolicy | None) -> None:
        """From now on the mode is the policy's; it takes the one chosen so far."""
        if policy is not None and self.policy is not None:
            policy.mode = self.policy.mode
        self.policy = policy

    @property
    def mode(self) -> Mode | None:
        if self.policy is None:
            return None
        return self.policy.mode or "ask"  # the REPL has a user to ask

    def press(self) -> None:
        mode = self.mode
        if self.policy is None or mode is None:
            return
        from paicli.policy.approval import MODES  # not before the first prompt: it loads the classifier

        following = MODES[(MODES.index(mode) + 1) % len(MODES)]
        if following == "yolo" and not self.confirming:
            self.confirming = True
            return
        self.confirming = False
        self.policy.mode = following

    def keep(self) -> None:
        self.confirming = False

    def keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("s-tab")
        def _cycle(event: KeyPressEvent) -> None:
            self.press()
            event.app.invalidate()

        @keys.add("escape", filter=Condition(lambda: self.confirming))
        def _keep(event: KeyPressEvent) -> None:
            self.keep()
            event.app.invalidate()

        return keys

    def toolbar(self, columns: int = 100) -> list[tuple[str, str]]:
        mode = self.mode
        if mode is None:
            return []
        if self.confirming:
            question = f" yolo runs every command unasked: Shift+Tab again confirms, Esc keeps {mode}"
            if len(question) >= columns:
                question = f" yolo? Shift+Tab: yes · Esc: stay {mode}"
            return [("bold ansired", question)]
        return [(MODE_STYLES[mode], f" {mode}")]


MODE_STYLES = {"ask": "", "auto": "bold", "yolo": "bold ansired"}


def tune_prompt(session: PromptSession[str], modes: ModeSwitch) -> None:
    """What the REPL's prompts share beyond their keys: ESC acts at once, and typing keeps the mode."""
    session.app.ttimeoutlen, session.app.timeoutlen = ESCAPE_WAIT, CHORD_WAIT
    session.default_buffer.on_text_changed += lambda _: modes.keep()


def prompt_text(*, planning: bool) -> FormattedText:
    """`› `, or `plan› ` when the next message is planned."""
    if planning:
        return FormattedText([("bold ansimagenta", "plan" + PROMPT)])
    return FormattedText([("bold ansicyan", PROMPT)])


class ContextMeter:
    """How full the conversation is against `context_tokens` (where compression starts), as `ctx 34%`.
    Estimated like the compressor does; computed again only when the conversation changed."""

    def __init__(self, budget_tokens: int) -> None:
        self.budget = budget_tokens
        self._seen: tuple[int, int, int] | None = None
        self._percent = 0

    def percent(self, messages: list[Message]) -> int:
        key = (id(messages), len(messages), id(messages[-1]) if messages else 0)
        if key != self._seen:
            from paicli.agent.compress import estimate_tokens

            self._seen = key
            self._percent = round(100 * estimate_tokens(messages) / self.budget)
        return self._percent


def toolbar_text(
    model: str,
    usage: Usage,
    mcp: McpManager | None,
    *,
    modes: ModeSwitch | None = None,
    sandbox: SandboxChoice | None = None,
    context: int | None = None,
    columns: int | None = None,
) -> FormattedText:
    """` ask · sandbox · gpt-4o · ↑ 1,234 ↓ 56 tokens · ctx 34% · MCP 1/1 · /help`: what the next message
    would run with, the mode first (Shift+Tab changes it). Narrower than `columns` (default: the terminal's)
    by leaving out, in turn, `/help`, the MCP summary, the sandbox and the model."""
    width = columns if columns is not None else shutil.get_terminal_size().columns
    mode = modes.toolbar(width) if modes is not None else []
    if modes is not None and modes.confirming:
        return FormattedText(mode)
    # (text, the order in which it goes when the line is too long; None: it stays)
    segments: list[tuple[str, int | None]] = []
    if sandbox is not None:
        segments.append(("sandbox" if sandbox.sandbox is not None else "no sandbox", 3))
    segments += [(model, 4), (f"{arrows(usage)} tokens", None)]
    if context is not None:
        segments.append((f"ctx {context}%", None))
    if mcp is not None:
        segments.append((mcp_summary(mcp.views()), 2))
    segments.append(("/help", 1))
    lead = sum(len(text) for _, text in mode)
    while len(" · ".join(text for text, _ in segments)) + lead + 3 >= width:  # the last column stays free
        droppable = [segment for segment in segments if segment[1] is not None]
        if not droppable:
            break
        segments.remove(min(droppable, key=lambda segment: segment[1] or 0))
    rest = " · ".join(text for text, _ in segments)
    return FormattedText([*mode, ("", f" · {rest}" if mode else f" {rest}")])


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
