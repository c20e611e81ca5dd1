"""Seeing more than the preview: `/expand` (Ctrl+O at the prompt) pages the last tool output whole,
`/transcript` the whole last turn or plan. Both come from the chat renderer's `Transcript`
(paicli/ui/chat/transcript.py) and go through `CommandContext.page`: a pager when longer than the screen
(`$PAGER`, else `less -R`), printed in place when there is none (`PAGER=` empty, or no `less`)."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.console import RenderableType

from paicli.ui.commands.context import CommandContext, Outcome

EXPAND = "/expand"


async def expand(ctx: CommandContext, arg: str) -> Outcome:
    return await _page(ctx, ctx.transcript.last_output(), "no tool output yet in this session")


async def transcript(ctx: CommandContext, arg: str) -> Outcome:
    return await _page(ctx, ctx.transcript.renderable(), "no turn yet in this session")


async def _page(ctx: CommandContext, shown: RenderableType | None, nothing: str) -> Outcome:
    if shown is None:
        ctx.say(nothing, "dim")
    else:
        await ctx.page(shown)
    return Outcome.CONTINUE


def add_expand_key(keys: KeyBindings, hold: Callable[[str], None]) -> None:
    """Ctrl+O at the prompt runs `/expand`; what was typed is handed to `hold` and comes back in the next
    prompt, unsent."""

    @keys.add("c-o")
    def _expand(event: KeyPressEvent) -> None:
        hold(event.current_buffer.text)
        event.app.exit(result=EXPAND)
