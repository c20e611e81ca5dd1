"""Chat rendering with rich: streamed Markdown, compact tool lines, token usage.

`ChatRenderer` is the EventSink of a chat turn. Streamed text is cut into Markdown blocks (a blank line
outside a code fence, or a closing fence, ends a block); each complete block is rendered once and
forgotten, so the cost stays linear in the length of the answer. On a terminal the unfinished block is
previewed in a transient `Live` region, refreshed at most `PREVIEW_HZ` times a second and cut to its tail.

Everything the model or a tool wrote is untrusted: it goes through `paicli.common.sanitize.terminal_safe` and is
never parsed as rich markup (only `Markdown(...)` and `Text(...)` see it); Markdown links are shown with
their targets, never as terminal hyperlinks whose text could differ from where they lead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, assert_never

from rich.console import Console, RenderableType
from rich.text import Text

from paicli.app.figures import format_duration, usage_line
from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
    ModelUsage,
    Notice,
    PlanApproved,
    PlanCreated,
    PlanFinished,
    PlanTaskStreamed,
    ReasoningDelta,
    ReplanEvent,
    ReplyRestarted,
    ReviewEvent,
    RunFinished,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.sanitize import terminal_safe
from paicli.common.shown import headline
from paicli.common.values import Usage
from paicli.llm.endpoint import RateStatus
from paicli.tools.output import mask_secrets
from paicli.ui.chat.command_live import APPEAR_AFTER, RunningCall
from paicli.ui.chat.diff_view import counts_text, inline_diff
from paicli.ui.chat.markdown_blocks import MarkdownBlocks as MarkdownBlocks  # re-exported: tests and benches use it
from paicli.ui.chat.markdown_view import markdown
from paicli.ui.chat.one_row import OneRow
from paicli.ui.chat.preview import Preview, result_preview
from paicli.ui.chat.thinking import Thinking, with_thinking
from paicli.ui.chat.transcript import Transcript

if TYPE_CHECKING:  # rich's Markdown (markdown-it) and Live load with the first answer, not at start-up
    from rich.live import Live

PREVIEW_HZ = 8.0
PREVIEW_MAX_CHARS = 4000
OWN_GAP = re.compile(r" {0,3}([-*+]\s|\d+[.)]\s|>|\|)")  # lists, quotes, tables: rich starts them with a blank line
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}
RESTARTED = "↻ the reply broke off and was asked again; what follows replaces the text above"


def tool_summary(event: ToolCallEvent, limit: int = 160) -> str:
    """One safe row saying what a call does: the tool's own summary (`src/app.py`, `pytest -q`, `TODO in
    src/`), else its first string argument, else the arguments as sent. Line breaks show as `⏎` (a second
    line of a command never passes for part of the first); one longer than about `limit` columns says its whole
    size."""
    if event.summary:
        return headline(event.summary, limit)
    arguments = event.arguments
    if isinstance(arguments, str):
        return headline(arguments, limit)
    first = next((value for value in arguments.values() if isinstance(value, str)), None)
    if first is not None:
        return headline(first, limit)
    return headline(json.dumps(arguments, ensure_ascii=False), limit) if arguments else ""


class ChatRenderer:
    """Renders the events of chat turns to a rich Console (the REPL's EventSink)."""

    def __init__(
        self,
        console: Console,
        *,
        secrets: Sequence[str] = (),
        live_preview: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self._clock = clock  # paces the preview (the benchmark replays a stream in simulated time)
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
        self.transcript = Transcript(self.secrets)  # the last turn whole, for /transcript and /expand
        self.status_line: Callable[[], str] | None = None  # the toolbar, drawn under a running command
        self.rate: Callable[[], RateStatus | None] | None = None  # what rate limiting holds back (the client's)
        self._running: list[RunningCall] = []  # calls between their tool_call and tool_result
        self._running_ticker: asyncio.Task[None] | None = None
        self._paused = 0  # a question is on screen: nothing is drawn live
        self._reply_blocks: list[str] = []  # blocks of the reply under way already printed
        self._replay: list[str] = []  # after a restart: printed blocks the new reply may repeat (not reprinted)

    # ---- EventSink ----

    def emit(self, event: AnyEvent) -> None:
        self.transcript.emit(event)
        match event:
            case ReasoningDelta():
                self.thinking.add(event.text)
                self.begin_wait()
                if self.live_preview:
                    self._preview()
            case TextDelta():
                self._close_thinking()
                self._stop_waiting()
                self._text(event.text)
            case ReplyRestarted():
                self._restart()
            case ApprovalWaited():
                pass  # the answer was seen being given
            case ToolCallEvent():
                self._close_thinking()
                self._stop_waiting()
                self.flush()
                self._replay = []
                self._tool_call(event)
            case CommandOutput():
                if self._running:
                    self._running[-1].add_output(event.text)
                    if self._live is not None:
                        self._preview()
            case ToolResultEvent():
                self._tool_result(event)
                self.begin_wait()  # the results go back to the model next
            case ModelUsage():
                self.turn_usage = self.turn_usage + event.usage
                self.session_usage = self.session_usage + event.usage
            case Notice():
                self.flush()
                self.line(event.message, NOTICE_STYLES[event.level])
            case PlanCreated() | PlanTaskStreamed() | PlanApproved() | TaskStarted() | TaskFinished():
                pass  # plan events are shown by the plan views, not by the chat renderer
            case ReplanEvent() | ReviewEvent():
                pass  # plan events are shown by the plan views, not by the chat renderer
            case PlanFinished() | RunFinished():
                pass  # a plan's end is the plan views', a `paicli run`'s is headless'; the REPL calls end_turn
            case _:
                assert_never(event)

    # ---- called by the REPL ----

    def begin_wait(self) -> None:
        """Shows "Thinking… 3.1s" on a terminal until the model's first text or tool call arrives."""
        if not self.live_preview or self._waiting_since is not None:
            return
        self._waiting_since = self._clock()
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

    def pause(self) -> None:
        """Before a question: the streamed text so far goes on screen, and nothing is drawn live until
        `resume` (a running command's timer would draw over the question)."""
        self._paused += 1
        self.flush()

    def resume(self) -> None:
        self._paused = max(0, self._paused - 1)
        for call in self._running:  # the time spent answering is not the command's
            call.started = time.monotonic()

    def flush(self) -> None:
        """Renders whatever text is still unfinished (end of a reply, before a tool line, on cancel)."""
        self._close_thinking()
        self._stop_preview()
        rest = self._blocks.finish()
        if rest.strip():
            self._print_block(rest)
        self._blocks_printed = 0
        self._reply_blocks = []

    def end_turn(self) -> None:
        """Flushes the text and prints the turn's token usage; the next turn counts from zero."""
        self._stop_waiting()
        self._running.clear()  # a cancelled turn's calls never get their result
        self._stop_running_ticker()
        self.flush()
        self._calls_in_batch, self._batch_has_results, self._after_tool_lines = 0, False, False
        self._replay = []
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

    def _restart(self) -> None:
        """The reply broke off and is asked again: its unfinished block (only ever previewed) is dropped, and
        the blocks already printed are not printed twice when the new reply repeats them."""
        self._stop_preview()
        self._blocks = MarkdownBlocks()
        self.thinking.restart()
        self._replay, self._reply_blocks = self._replay + self._reply_blocks, []

    def _print_block(self, block: str) -> None:
        if self._replay:
            if self._replay[0] == block:
                self._replay.pop(0)
                self._reply_blocks.append(block)
                return
            self._replay = []
            self.line(RESTARTED, "dim")
        self._reply_blocks.append(block)
        gap = (self._blocks_printed or self._after_tool_lines) and not OWN_GAP.match(block)
        self._after_tool_lines = False
        rendered = markdown(self._mask(block))
        self.console.print(*((Text(), rendered) if gap else (rendered,)))  # a blank line before it: one print
        self._blocks_printed += 1

    def _preview(self, force: bool = False) -> None:
        if self._paused:
            return
        now = self._clock()
        if not force and now - self._last_preview < 1.0 / PREVIEW_HZ:
            return
        self._last_preview = now
        renderable = self._preview_renderable()
        if self._live is None:
            from paicli.ui.chat.reflow import transient_live  # rich's Live loads with the first answer

            self._live = transient_live(self.console, renderable)
        self._live.update(renderable, refresh=True)

    def _preview_renderable(self) -> RenderableType:
        rows = max(3, self.console.height - 3)  # a preview taller than the screen could not be cleared
        text = self._blocks.pending(min(PREVIEW_MAX_CHARS, rows * self.console.width), rows)
        if text.strip():
            return markdown(self._mask(text))
        if self._running:
            call = self._running[-1]
            status = self.status_line() if self.status_line is not None else ""
            return call.renderable(format_duration(time.monotonic() - call.started), self._mask(status))
        if self._waiting_since is not None:
            waited = format_duration(self._clock() - self._waiting_since)
            header = Text.assemble(("Thinking… ", "dim bold"), (f"{waited} · Esc cancels", "dim"))
            held = self.rate() if self.rate is not None else None
            if held is not None and held.retry_in is not None:  # held at the endpoint's gate, not thinking
                header = Text.assemble(("Rate limited… ", "yellow bold"), (f"{held.detail()} · Esc cancels", "dim"))
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
        room = self.console.width - line.cell_len - 1  # the summary's own `… (3 lines, …)` note stays in sight
        summary = self._mask(tool_summary(event, limit=max(20, room)))
        if summary:
            line.append(" " + summary)
        self.console.print(OneRow(line))
        self._running.append(RunningCall(event.name, time.monotonic()))
        if self.live_preview and self._running_ticker is None:
            with contextlib.suppress(RuntimeError):  # no running loop: nothing ticks, nothing is shown
                self._running_ticker = asyncio.get_running_loop().create_task(self._tick_running())

    async def _tick_running(self) -> None:
        await asyncio.sleep(APPEAR_AFTER)
        while self._running:
            self._preview(force=True)
            await asyncio.sleep(1.0 / PREVIEW_HZ)
        self._running_ticker = None

    def _stop_running_ticker(self) -> None:
        if self._running_ticker is not None:
            self._running_ticker.cancel()
            self._running_ticker = None

    def _tool_result(self, event: ToolResultEvent) -> None:
        running = next((call for call in self._running if call.name == event.name), None)
        if running is not None:
            self._running.remove(running)
        if not self._running:
            self._stop_running_ticker()
        self._stop_preview()
        # With several calls in flight, say which one this result belongs to.
        who = f"{terminal_safe(event.name)}: " if self._calls_in_batch > 1 else ""
        self._batch_has_results = self._after_tool_lines = True
        preview = result_preview(event.name, event.ok, self._mask(event.output))
        line = Text(f"  ⎿ {who}{preview.headline}", style="dim" if event.ok else "dim red")
        if event.diff:
            line.append(" ")
            line.append_text(counts_text(event.diff))
        self.console.print(OneRow(line))
        if event.diff:
            self.console.print(inline_diff(self._mask(event.diff), expand_hint=" · Ctrl+O shows all"))
        else:
            self._print_preview_lines(preview)

    def _print_preview_lines(self, preview: Preview) -> None:
        shown = [*preview.head]
        if preview.hidden:
            shown.append(f"… {preview.hidden:,} more line{'s' if preview.hidden != 1 else ''} · Ctrl+O shows all")
        shown += preview.tail
        for index, text in enumerate(shown):
            hint = preview.hidden and index == len(preview.head)
            self.console.print(OneRow(Text("    " + text, style="dim italic" if hint else "dim")))

    def _mask(self, text: str) -> str:
        return mask_secrets(text, self.secrets)
