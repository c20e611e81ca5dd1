"""Chat rendering with rich: streamed Markdown, compact tool lines, token usage.

`ChatRenderer` is the EventSink of a chat turn. Streamed text is cut into Markdown blocks (a blank line
outside a code fence, or a closing fence, ends a block); each complete block is rendered once and
forgotten, so the cost stays linear in the length of the answer. On a terminal the unfinished block is
previewed in a transient `Live` region, refreshed at most `PREVIEW_HZ` times a second and cut to its tail.

Everything the model or a tool wrote is untrusted: it goes through `paicli.sanitize.terminal_safe` and is
never parsed as rich markup (only `Markdown(...)` and `Text(...)` see it); Markdown links are shown with
their targets, never as terminal hyperlinks whose text could differ from where they lead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Mapping, Sequence

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from paicli.app.figures import arrows, compact_count, token_count
from paicli.events import Event, ModelUsage, Notice, ReasoningDelta, TextDelta, ToolCallEvent, ToolResultEvent
from paicli.llm.price import Price, cost_of
from paicli.llm.types import Usage
from paicli.sanitize import one_line, terminal_safe
from paicli.tools.output import mask_secrets
from paicli.ui.thinking import Thinking, with_thinking

PREVIEW_HZ = 8.0
PREVIEW_MAX_CHARS = 4000
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
OWN_GAP = re.compile(r" {0,3}([-*+]\s|\d+[.)]\s|>|\|)")  # lists, quotes, tables: rich starts them with a blank line
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}



def tool_summary(event: ToolCallEvent) -> str:
    """One safe line saying what a call does: the tool's own summary (`src/app.py`, `pytest -q`, `TODO in
    src/`), else its first string argument, else the arguments as sent."""
    if event.summary:
        return one_line(event.summary)
    arguments = event.arguments
    if isinstance(arguments, str):
        return one_line(arguments)
    first = next((value for value in arguments.values() if isinstance(value, str)), None)
    if first is not None:
        return one_line(first)
    return one_line(json.dumps(arguments, ensure_ascii=False)) if arguments else ""


def result_summary(ok: bool, output: str) -> str:
    """`42 lines` for a success, the first line of the message for an error."""
    if not ok:
        # split on newlines only: str.splitlines() also cuts at \r, \u2028, ... and would hide the rest
        first = next((line for line in terminal_safe(output).split("\n") if line.strip()), "failed")
        first = one_line(first)
        return first if first.lower().startswith("error") else f"Error: {first}"
    if not output.strip():
        return "no output"
    lines = output.count("\n") + (0 if output.endswith("\n") else 1)
    return f"{lines:,} line" + ("" if lines == 1 else "s")


def usage_line(turn: Usage, session: Usage | None = None) -> str:
    """`↑ 1,234 ↓ 56 tokens`; `↑ ~1.2k ↓ ~56 tokens (estimated)` when the server reported none."""
    line = f"{arrows(turn)} tokens"
    if turn.cached_tokens:
        line += f" ({token_count(turn.cached_tokens, turn.estimated)} cached)"
    if session is not None and session != turn:
        line += f" · session {arrows(session)}"
    if turn.estimated or (session is not None and session.estimated):
        line += " (~ estimated: the server reported no usage)"
    return line


def format_cost(cost: float) -> str:
    """A price in the user's currency (no symbol: the config does not say which): 1.23, 0.0042."""
    return f"{cost:,.2f}" if cost >= 1 else f"{cost:.4f}"


def usage_report(usage: Usage, prices: Mapping[str, Price]) -> list[str]:
    """What `/usage` shows: the session's tokens, split by model when more than one was used, and the
    cost when every model used has a price."""
    lines = [f"session: {arrows(usage)} tokens" + (" (~ estimated: the server reported no usage)" * usage.estimated)]
    if len(usage.by_model) > 1:
        width = max(len(name) for name in usage.by_model)
        for name, tokens in sorted(usage.by_model.items()):
            lines.append(f"  {name:<{width}}  ↑ {tokens.prompt_tokens:,} ↓ {tokens.completion_tokens:,}")
    cost = cost_of(usage, prices) if prices and usage.total else None
    if cost is not None:
        lines.append(f"cost: {format_cost(cost)} (at the configured prices)")
    return lines


class MarkdownBlocks:
    """Cuts streamed Markdown into complete blocks. Each piece of text is looked at a bounded number of times."""

    def __init__(self) -> None:
        self._line_parts: list[str] = []  # the current line, not yet ended by a newline
        self._block: list[str] = []  # complete lines of the current block
        self._fence: str | None = None  # the fence characters while inside a code block
        self._fence_line = ""  # the whole opening line, language included

    def feed(self, text: str) -> list[str]:
        """Adds streamed text; returns the blocks it completed."""
        if "\n" not in text:
            if text:
                self._line_parts.append(text)
            return []
        pieces = text.split("\n")
        lines = ["".join(self._line_parts) + pieces[0], *pieces[1:-1]]
        self._line_parts = [pieces[-1]] if pieces[-1] else []
        blocks: list[str] = []
        for line in lines:
            self._take_line(line, blocks)
        return blocks

    def pending(self, max_chars: int | None = None, max_lines: int | None = None) -> str:
        """The unfinished block, or its tail of at most about `max_chars` characters and `max_lines` lines."""
        partial = "".join(self._line_parts)
        if max_chars is None and max_lines is None:
            return "\n".join([*self._block, partial]).strip("\n")
        max_chars = max_chars or len(partial) + sum(len(line) + 1 for line in self._block)
        max_lines = max_lines or len(self._block) + 1
        tail = [partial[-max_chars:]]
        size, taken = len(tail[0]), 0
        while taken < len(self._block) and size < max_chars and taken + 1 < max_lines:
            line = self._block[-1 - taken]
            tail.append(line)
            size, taken = size + len(line) + 1, taken + 1
        text = "\n".join(reversed(tail)).strip("\n")
        if self._fence is not None and taken < len(self._block):
            text = f"{self._fence_line}\n{text}"  # the fence line was cut off: keep the preview inside the code block
        return text

    def finish(self) -> str:
        """The unfinished block, and a fresh start."""
        text = self.pending()
        self._line_parts, self._block, self._fence = [], [], None
        return text

    def _take_line(self, line: str, blocks: list[str]) -> None:
        fence = FENCE.match(line)
        if self._fence is not None:
            self._block.append(line)
            if fence and self._closes(line.strip()):
                self._fence = None
                blocks.append("\n".join(self._block))
                self._block = []
        elif fence:
            self._fence, self._fence_line = fence.group(1), line.strip()
            self._block.append(line)
        elif not line.strip():
            if self._block:
                blocks.append("\n".join(self._block))
                self._block = []
        else:
            self._block.append(line)

    def _closes(self, stripped: str) -> bool:
        """A closing fence: only fence characters, the opening's kind, at least as many."""
        assert self._fence is not None
        return set(stripped) == {self._fence[0]} and len(stripped) >= len(self._fence)


class ChatRenderer:
    """Renders the events of chat turns to a rich Console (the REPL's EventSink)."""

    def __init__(self, console: Console, *, secrets: Sequence[str] = (), live_preview: bool | None = None) -> None:
        self.console = console
        self.secrets = list(secrets)
        self.live_preview = console.is_terminal if live_preview is None else live_preview
        self.turn_usage = Usage()
        self.session_usage = Usage()
        self.streamed = False  # some text of this turn arrived as deltas
        self._blocks = MarkdownBlocks()
        self._blocks_printed = 0
        self._live: Live | None = None
        self._last_preview = 0.0
        self._calls_in_batch = 0  # tool calls since the last result, shown before their results
        self._batch_has_results = False
        self._after_tool_lines = False  # text printed next gets a blank line before it
        self._waiting_since: float | None = None  # the model was asked and has not answered yet
        self._ticker: asyncio.Task[None] | None = None
        self.thinking = Thinking()  # a reasoning model's thought: live while it streams, then one line

    # ---- EventSink ----

    def emit(self, event: Event) -> None:
        if isinstance(event, ReasoningDelta):
            self.thinking.add(event.text)
            self.begin_wait()
            if self.live_preview:
                self._preview()
        elif isinstance(event, TextDelta):
            self._close_thinking()
            self._stop_waiting()
            self._text(event.text)
        elif isinstance(event, ToolCallEvent):
            self._close_thinking()
            self._stop_waiting()
            self.flush()
            self._tool_call(event)
        elif isinstance(event, ToolResultEvent):
            self._tool_result(event)
            self.begin_wait()  # the results go back to the model next
        elif isinstance(event, ModelUsage):
            self.turn_usage = self.turn_usage + event.usage
            self.session_usage = self.session_usage + event.usage
        elif isinstance(event, Notice):
            self.flush()
            self.line(event.message, NOTICE_STYLES[event.level])
        # Plan events are shown by the plan views, not by the chat renderer.

    # ---- called by the REPL ----

    def begin_wait(self) -> None:
        """Shows "Thinking… 3.1s" on a terminal until the model's first text or tool call arrives."""
        if not self.live_preview or self._waiting_since is not None:
            return
        self._waiting_since = time.monotonic()
        with contextlib.suppress(RuntimeError):  # no running loop: nothing ticks, nothing is shown
            self._ticker = asyncio.get_running_loop().create_task(self._tick_wait())

    async def _tick_wait(self) -> None:
        while self._waiting_since is not None:
            self._preview(force=True)
            await asyncio.sleep(1.0 / PREVIEW_HZ)

    def _stop_waiting(self) -> None:
        if self._waiting_since is None:
            return
        self._waiting_since = None
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if not self._blocks.pending(1, 1).strip():
            self._stop_preview()

    def flush(self) -> None:
        """Renders whatever text is still unfinished (end of a reply, before a tool line, on cancel)."""
        self._close_thinking()
        self._stop_preview()
        rest = self._blocks.finish()
        if rest.strip():
            self._print_block(rest)
        self._blocks_printed = 0

    def end_turn(self) -> None:
        """Flushes the text and prints the turn's token usage; the next turn counts from zero."""
        self._stop_waiting()
        self.flush()
        self._calls_in_batch, self._batch_has_results, self._after_tool_lines = 0, False, False
        if self.turn_usage.total:
            self.line(usage_line(self.turn_usage, self.session_usage), "dim")
        self.turn_usage = Usage()
        self.streamed = False

    def line(self, message: str, style: str = "") -> None:
        """One line of untrusted text, never parsed as markup."""
        self._stop_preview()
        # Wrapped by rich at spaces (the terminal would cut words at its edge); a word wider than the screen folds.
        self.console.print(Text(self._mask(terminal_safe(message)), style=style, overflow="fold"))

    # ---- internals ----

    def _text(self, delta: str) -> None:
        self.streamed = True
        blocks = self._blocks.feed(terminal_safe(delta))
        if blocks and self._live is not None:
            # Printing redraws the preview below the output: it must no longer hold the printed blocks.
            self._live.update(self._preview_renderable(), refresh=False)
        for block in blocks:
            self._print_block(block)
        if self.live_preview:
            self._preview()

    def _print_block(self, block: str) -> None:
        if (self._blocks_printed or self._after_tool_lines) and not OWN_GAP.match(block):
            self.console.print()
        self._after_tool_lines = False
        self.console.print(Markdown(self._mask(block), hyperlinks=False))
        self._blocks_printed += 1

    def _preview(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_preview < 1.0 / PREVIEW_HZ:
            return
        self._last_preview = now
        renderable = self._preview_renderable()
        if self._live is None:
            self._live = transient_live(self.console, renderable)
        self._live.update(renderable, refresh=True)

    def _preview_renderable(self) -> RenderableType:
        rows = max(3, self.console.height - 3)  # a preview taller than the screen could not be cleared
        text = self._blocks.pending(min(PREVIEW_MAX_CHARS, rows * self.console.width), rows)
        if text.strip():
            return Markdown(self._mask(text), hyperlinks=False)
        if self._waiting_since is not None:
            waited = format_duration(time.monotonic() - self._waiting_since)
            header = Text.assemble(("Thinking… ", "dim bold"), (f"{waited} · Esc cancels", "dim"))
            return with_thinking(header, self.thinking, self.console.width, rows)
        return Text("")

    def _close_thinking(self) -> None:
        summary = self.thinking.close()
        if summary is not None:
            self.line(summary, "dim")

    def _stop_preview(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _tool_call(self, event: ToolCallEvent) -> None:
        if self._batch_has_results:
            self._calls_in_batch, self._batch_has_results = 0, False
        self._calls_in_batch += 1
        line = Text.assemble(("⏺ ", "cyan"), (terminal_safe(event.name), "bold"))
        summary = self._mask(tool_summary(event))
        if summary:
            line.append(" " + summary)
        line.no_wrap, line.overflow = True, "ellipsis"
        self.console.print(line)

    def _tool_result(self, event: ToolResultEvent) -> None:
        # With several calls in flight, say which one this result belongs to.
        who = f"{terminal_safe(event.name)}: " if self._calls_in_batch > 1 else ""
        self._batch_has_results = self._after_tool_lines = True
        summary = self._mask(result_summary(event.ok, event.output))
        line = Text(f"  ⎿ {who}{summary}", style="dim" if event.ok else "dim red")
        line.no_wrap, line.overflow = True, "ellipsis"
        self.console.print(line)

    def _mask(self, text: str) -> str:
        return mask_secrets(text, self.secrets)


def transient_live(console: Console, renderable: RenderableType) -> Live:
    """A started live region that we redraw ourselves (no refresh thread) and that vanishes when
    stopped; cropped, since a region taller than the screen cannot be redrawn."""
    live = Live(
        renderable,
        console=console,
        auto_refresh=False,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
        vertical_overflow="crop",
    )
    live.start(refresh=True)
    return live


def format_duration(seconds: float) -> str:
    """`0.4s`, `12.3s`, `2m05s`, `1h02m`."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_tokens(count: int, estimated: bool = False) -> str:
    """`532 tok`, `12.3k tok`, `1.2M tok`; `~12.3k tok` when estimated."""
    return f"{'~' if estimated else ''}{compact_count(count)} tok"

