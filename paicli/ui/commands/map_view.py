"""`/map [QUERY]`: the repository map the planner would be given for QUERY, in a pager when long, with a
line of figures under it. Built off the event loop (the first one indexes the workspace)."""

from __future__ import annotations

from functools import partial

from rich.text import Text

from paicli.common.events import AnyEvent, Notice
from paicli.common.sanitize import terminal_safe
from paicli.plan.offload import off_loop
from paicli.repomap.repo_map import MapResult, RepoMap
from paicli.ui.commands.context import CommandContext, Outcome


class _Notices:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, Notice):
            self.messages.append(event.message)


def _build(ctx: CommandContext, query: str, notices: _Notices) -> MapResult:
    ctx.map_ready()  # the index being warmed: its whole update, not one that gives up on the lock
    repo_map = RepoMap(ctx.workspace, ctx.home, notices, lister=ctx.map_lister, map_tokens=ctx.map_tokens)
    try:
        return repo_map.for_goal(query)
    finally:
        repo_map.close()


async def map_slash(ctx: CommandContext, arg: str) -> Outcome:
    notices = _Notices()
    ctx.say("building the repository map…" if not arg.strip() else f"mapping the repository for: {arg.strip()}", "dim")
    result = await off_loop(partial(_build, ctx, arg.strip(), notices), name="paicli-map")
    for message in notices.messages:
        ctx.say(terminal_safe(message), "yellow")
    await ctx.page(Text(terminal_safe(result.text)))
    update = result.update
    ctx.say(
        f"{result.rendered.tokens:,} of {ctx.map_tokens:,} map tokens · {len(result.rendered.files):,} of "
        f"{update.listed:,} files named · index: {update.read:,} files read in {update.seconds:.2f} s",
        "dim",
    )
    return Outcome.CONTINUE
