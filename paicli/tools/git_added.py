"""What a sandboxed command left among the git-controlled paths of the workspace (paicli/sandbox/gitdirs.py).

Read-only binds keep every git directory that exists as it is, but a bind cannot stand where nothing is
yet: `git init`, or a `.git` written into an uninitialised submodule's folder, makes a git directory
the user's own `git status` would read (and run `core.fsmonitor` from). After each sandboxed command
the workspace is looked at again: what a plan task named in its `files` stays; otherwise the gate is
asked (the user, in `ask` mode), and what it does not keep is removed, with a note in the result and a
one-line notice for the user (`ctx.notice`: the REPL, headless stderr, a `--json` notice event).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from paicli.common.shown import inline
from paicli.sandbox.folders import Folders
from paicli.sandbox.gitdirs import GitState, declares, git_state, remove_added
from paicli.tools.base import ToolContext


async def before_command(ctx: ToolContext) -> GitState | None:
    """The git-controlled paths before a sandboxed command (None: no sandbox, nothing to compare)."""
    if ctx.sandbox is None:
        return None
    return await asyncio.to_thread(git_state, ctx.workspace, None, _git_folders(ctx))


async def settle(before: GitState | None, ctx: ToolContext) -> str:
    """Keep or remove what the command added; the note for the result ("" when nothing was added)."""
    if before is None:
        return ""
    root = Path(os.path.realpath(ctx.workspace))
    undeclared = await asyncio.to_thread(_undeclared, before, ctx, root)
    if not undeclared:
        return ""
    if ctx.keep_added is not None:
        kept = False
        with contextlib.suppress(Exception):  # a failing question keeps nothing
            kept = await ctx.keep_added(_names(undeclared, root))
        if kept:
            return f"[sandbox] kept {', '.join(_names(undeclared, root))} (git-controlled; the user allowed it)"
    return _remove(undeclared, root, ctx)


def settle_now(before: GitState | None, ctx: ToolContext) -> str:
    """The same without a question (the command was cancelled): what was added is removed. Blocking."""
    if before is None:
        return ""
    root = Path(os.path.realpath(ctx.workspace))
    return _remove(_undeclared(before, ctx, root), root, ctx)


def _undeclared(before: GitState, ctx: ToolContext, root: Path) -> list[Path]:
    added = before.added(git_state(ctx.workspace, None, _git_folders(ctx)))
    declared = ctx.scope.writable if ctx.scope is not None else None
    return [path for path in added if declared is None or not declares(root, declared, path)]


def _git_folders(ctx: ToolContext) -> Folders | None:
    return ctx.folders.git if ctx.folders is not None else None


def _names(paths: list[Path], root: Path) -> list[str]:
    return [path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path) for path in paths]


def _remove(undeclared: list[Path], root: Path, ctx: ToolContext) -> str:
    if not undeclared:
        return ""
    names = _names(undeclared, root)
    failed = [name for path, name in zip(undeclared, names, strict=True) if not remove_added(path, root)]
    removed = [name for name in names if name not in failed]
    note = ""
    if removed:
        note = (
            f"[sandbox] removed {', '.join(removed)}: the command made git-controlled paths (a git directory, "
            "hooks or config git reads), which your git would use outside the sandbox; not kept"
        )
        _tell(ctx, f"sandbox: removed {_listed(removed)}, made by a command: your git would run programs from it")
    if failed:
        note += f"\n[sandbox] could not remove {', '.join(failed)}: check them before running git"
        _tell(
            ctx, f"sandbox: a command made {_listed(failed)} and it could not be removed: check it before running git"
        )
    return note.strip()


NOTICE_NAMES = 3  # paths named in the notice; the tool result names them all


def _listed(names: list[str]) -> str:
    """The first paths, each on one line whatever it holds (newlines shown as ⏎), and how many more."""
    shown = ", ".join(inline(name) for name in names[:NOTICE_NAMES])
    more = len(names) - NOTICE_NAMES
    return shown + (f" and {more} more" if more > 0 else "")


def _tell(ctx: ToolContext, message: str) -> None:
    if ctx.notice is not None:
        with contextlib.suppress(Exception):  # the display must never break the command
            ctx.notice(message)
