"""Saved conversations in the REPL: `-c` at start-up, `/resume` (list, pick, continue) and `/new`."""

from __future__ import annotations

import time

from rich.markdown import Markdown
from rich.text import Text

from paicli.app.conversations import Restored, last_exchange, latest_session
from paicli.app.figures import compact_count
from paicli.app.sessions import SessionSummary
from paicli.common.sanitize import one_line, terminal_safe
from paicli.ui.commands.context import CommandContext, Outcome

LISTED = 10  # conversations /resume lists
SHOWN_LINES = 30  # lines of the last answer shown when a conversation continues


async def new_conversation(ctx: CommandContext, arg: str) -> Outcome:
    ctx.clear_conversation()
    ctx.say("new conversation · /resume lists the earlier ones", "dim")
    return Outcome.CONTINUE


async def resume(ctx: CommandContext, arg: str) -> Outcome:
    """`/resume` lists the recent conversations, this one marked (`·`, not numbered), and asks which;
    `/resume N` takes the Nth of the others at once."""
    store = ctx.conversations.store
    recent = store.recent(LISTED + 1)
    this = next((s for s in recent if s.id == ctx.conversations.session_id), None)
    summaries = [s for s in recent if s is not this][:LISTED]
    choice = arg.strip()
    if not choice and this is not None:
        ctx.say(summary_line(None, this) + "  ← this conversation")
    if not summaries:
        ctx.say(
            "no other saved conversation in this workspace yet"
            if this
            else "no saved conversation in this workspace yet",
            "dim",
        )
        return Outcome.CONTINUE
    if not choice:
        for number, summary in enumerate(summaries, 1):
            ctx.say(summary_line(number, summary))
        choice = (await ctx.ask(f"resume which? [1-{len(summaries)}, Enter keeps this one] ")).strip()
        if not choice:
            return Outcome.CONTINUE
    if not choice.isdigit() or not 1 <= int(choice) <= len(summaries):
        ctx.error(f"{one_line(choice, limit=40)} is not one of the numbers 1 to {len(summaries)}")
        return Outcome.CONTINUE
    try:
        session = store.load(summaries[int(choice) - 1].id)
    except OSError as err:
        ctx.error(f"the conversation cannot be read: {one_line(str(err), limit=300)}")
        return Outcome.CONTINUE
    show_restored(ctx, ctx.resume_conversation(session))
    return Outcome.CONTINUE


def continue_latest(ctx: CommandContext) -> None:
    """`paicli -c`: the workspace's last conversation goes on, or a new one starts with a word why."""
    session = latest_session(ctx.conversations.store)
    if session is None:
        ctx.say("no earlier conversation in this workspace: starting a new one", "yellow")
        return
    show_restored(ctx, ctx.resume_conversation(session))


def summary_line(number: int | None, summary: SessionSummary) -> str:
    """`  2  Dec 01 21:05  3 turns  12.3k tokens  fix the failing test in…` (`·` for no number: this one)"""
    when = time.strftime("%b %d %H:%M", time.localtime(summary.modified))
    turns = f"{summary.turns} turn" + "s" * (summary.turns != 1)
    first = one_line(summary.first_message, limit=60) or "(no message)"
    mark = "·" if number is None else str(number)
    return f"  {mark:>2}  {when}  {turns:>9}  {compact_count(summary.tokens):>6} tokens  {first}"


def show_restored(ctx: CommandContext, restored: Restored) -> None:
    summary = restored.session.summary
    when = time.strftime("%b %d %H:%M", time.localtime(summary.modified))
    ctx.say(f"continuing the conversation of {when} ({summary.turns} turn{'s' * (summary.turns != 1)})", "dim")
    for notice in restored.notices():
        ctx.say(notice, "yellow")
    exchange = last_exchange(restored.messages)
    if exchange is None:
        return
    question, answer = exchange
    ctx.show(Text("you: " + one_line(question, limit=300), style="bold"))
    if answer:
        lines = terminal_safe(answer).split("\n")
        cut = "\n".join(lines[:SHOWN_LINES]) + ("\n\n…" if len(lines) > SHOWN_LINES else "")
        ctx.show(Markdown(cut, hyperlinks=False))
