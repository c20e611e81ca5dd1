"""`/undo [TASK_ID | ID]`, `/redo` and `/changes [TASK_ID | ID]` in the REPL.

A TASK_ID names a task of the last plan; an ID names a turn or a plan (`/changes` lists the recent
ones). Files changed since are shown and overwritten only after a yes.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from paicli.app.checkpoints.images import shown_path
from paicli.app.checkpoints.report import counts, entry_line, preview_lines, refusal_lines
from paicli.app.checkpoints.service import Checkpoints
from paicli.app.checkpoints.undo import Preview, UndoRefusal
from paicli.common.sanitize import one_line, terminal_safe
from paicli.ui.chat.changes_view import diff_view
from paicli.ui.commands.context import CommandContext, Outcome

OFF = (
    "checkpoints are off (`checkpoints = false` in the config, git is not installed, or the workspace is too "
    "large to snapshot): nothing was recorded. To record the next turns and plans, install git and set "
    "`checkpoints = true` in .paicli/config.toml, then restart paicli"
)
CHANGES_OFF = "meanwhile the diff under each edit shows what it changed, and /transcript pages the last turn's"
RECENT = 5


async def undo(ctx: CommandContext, arg: str) -> Outcome:
    checkpoints = await _checkpoints(ctx, arg, "/undo [TASK_ID | ID]")
    if checkpoints is not None:
        try:
            entry_id, task_id = await _target(checkpoints, arg.strip())
            await _carry_out(ctx, checkpoints, await checkpoints.preview(entry_id, task_id))
        except UndoRefusal as refusal:
            ctx.error(one_line(str(refusal), limit=1000))
    return Outcome.CONTINUE


async def redo(ctx: CommandContext, arg: str) -> Outcome:
    checkpoints = await _checkpoints(ctx, "", "/redo")
    if checkpoints is not None:
        if arg.strip():
            ctx.error("/redo takes no argument: it takes the last undo back")
            return Outcome.CONTINUE
        try:
            await _carry_out(ctx, checkpoints, await checkpoints.preview(None, None, redo=True))
        except UndoRefusal as refusal:
            ctx.error(one_line(str(refusal), limit=1000))
    return Outcome.CONTINUE


async def changes(ctx: CommandContext, arg: str) -> Outcome:
    checkpoints = await _checkpoints(ctx, arg, "/changes [TASK_ID | ID]")
    if checkpoints is None:
        if ctx.checkpoints is None and len(arg.split()) <= 1:
            ctx.say(CHANGES_OFF, "dim")
        return Outcome.CONTINUE
    try:
        entry_id, task_id = await _target(checkpoints, arg.strip())
        entry, files, diff = await checkpoints.diff(entry_id, task_id)
    except UndoRefusal as refusal:
        ctx.error(one_line(str(refusal), limit=1000))
        return Outcome.CONTINUE
    subject = f"{task_id} of {entry.id}" if task_id else entry.id
    parts: list[RenderableType] = [Text(f"{subject} · {entry.kind} · {terminal_safe(entry.label)}", style="bold")]
    for change in files:
        tasks = f"  ({', '.join(change.task_ids)})" if change.task_ids else ""
        parts.append(
            Text(f"  {change.status:<8} {terminal_safe(change.path)}  {counts(change.added, change.removed)}{tasks}")
        )
    if any(len(change.task_ids) > 1 for change in files):
        parts.append(Text("  several tasks ran commands while these files changed: any of them may have", "yellow"))
    parts.append(diff_view(diff) if diff else Text("(no diff: nothing left to show)", style="dim"))
    if not arg.strip():
        others = [e for e in reversed(await checkpoints.entries()) if e.id != entry.id and (e.changes or e.undos)]
        if others:
            parts.append(Text("earlier (/changes ID, /undo ID):", style="dim"))
            parts += [Text("  " + entry_line(e), style="dim") for e in others[:RECENT]]
    await ctx.page(Group(*parts))
    return Outcome.CONTINUE


async def _checkpoints(ctx: CommandContext, arg: str, usage: str) -> Checkpoints | None:
    if len(arg.split()) > 1:
        ctx.error(f"usage: {usage}")
        return None
    if ctx.checkpoints is None:
        ctx.error(OFF)
    return ctx.checkpoints


async def _target(checkpoints: Checkpoints, word: str) -> tuple[str | None, str | None]:
    """(entry id, task id) that a word names: a turn or plan id, else a task of the last plan."""
    if not word:
        return None, None
    entries = await checkpoints.entries()
    if any(e.id == word for e in entries):
        return word, None
    plan = next((e for e in reversed(entries) if e.kind == "plan"), None)
    if plan is None or word not in plan.task_ids():
        tasks = f" (tasks of the last plan: {', '.join(plan.task_ids())})" if plan and plan.task_ids() else ""
        raise UndoRefusal(f"no task of the last plan and no checkpoint is called {word!r}{tasks}", usage=True)
    return None, word


async def _carry_out(ctx: CommandContext, checkpoints: Checkpoints, preview: Preview) -> None:
    force = False
    if preview.refused:
        for line in refusal_lines(preview, force_hint=""):
            if line:
                ctx.say(line, "yellow")
        if not await ctx.confirm("Overwrite them? [y/N] "):
            ctx.say("nothing changed", "dim")
            return
        force = True
    done = await checkpoints.carry_out(preview, force=force)
    lines = preview_lines(done, done=True)
    ctx.say(lines[0], "bold")
    for line in lines[1:]:
        ctx.say(line, "red" if line.lstrip().startswith("failed") else "")
    ctx.say("/undo takes it back again" if done.redo else "/redo takes it back", "dim")
    restored = ", ".join(shown_path(a.path) for a in done.actions if a.path not in done.errors)
    what = "took back the undo of" if done.redo else "undid"
    ctx.note_for_model(
        f"[paicli: the user {what} {done.entry.id} ({done.entry.label}); these files changed on "
        f"disk: {restored}. Read them again before relying on what you saw or wrote.]"
    )
