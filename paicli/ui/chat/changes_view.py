"""How the REPL shows checkpoints: the "Changed: …" line after a turn or plan, a diff in syntax colours
(paged when it is longer than the screen), and what an undo did."""

from __future__ import annotations

import asyncio
import io
import os
import shlex
import shutil
from typing import Literal, cast

from rich.console import Console, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from paicli.app.checkpoints.report import change_text
from paicli.common.events import FileChange
from paicli.common.sanitize import terminal_safe

SHOWN_FILES = 6
ColorSystemName = Literal["auto", "standard", "256", "truecolor", "windows"]


def changed_text(changes: list[FileChange], hint: str = "/undo to revert") -> Text:
    """`Changed: app.py +3 −0 · tests/test_app.py +3 −1 (task_3, task_4) · /undo to revert`, in colour."""
    text = Text("Changed: ", style="bold")
    for i, change in enumerate(changes[:SHOWN_FILES]):
        if i:
            text.append(" · ", style="dim")
        text.append(change_text(change), style="red" if change.status == "deleted" else "")
    if len(changes) > SHOWN_FILES:
        text.append(f" · {len(changes) - SHOWN_FILES} more files", style="dim")
    text.append(f" · {hint}", style="dim")
    return text


def diff_view(diff: str) -> RenderableType:
    """A unified diff in syntax colours (its text made terminal-safe line by line first)."""
    safe = "\n".join(terminal_safe(line) for line in diff.splitlines())
    return Syntax(safe, "diff", theme="ansi_dark", background_color="default", word_wrap=True)


def rendered_lines(console: Console, renderable: RenderableType) -> str:
    """What `renderable` looks like on `console`, escape codes included."""
    buffer = io.StringIO()
    copy = Console(
        file=buffer,
        width=console.width,
        color_system=cast(ColorSystemName | None, console.color_system),
        force_terminal=console.is_terminal,
        highlight=False,
    )
    copy.print(renderable)
    return buffer.getvalue()


def pager_command() -> list[str] | None:
    """`$PAGER` (split like a shell would), else `less -R`; None when neither is there."""
    wanted = os.environ.get("PAGER")
    if wanted is not None:
        words = shlex.split(wanted)
        return words or None
    less = shutil.which("less")
    return [less, "-R"] if less else None


async def page(console: Console, renderable: RenderableType) -> None:
    """Prints `renderable`, through the pager when it is longer than the screen."""
    text = rendered_lines(console, renderable)
    command = pager_command() if console.is_terminal else None
    if command is None or text.count("\n") < console.height - 2:
        console.file.write(text)
        console.file.flush()
        return
    try:
        process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE)
    except OSError:
        console.file.write(text)
        console.file.flush()
        return
    await process.communicate(text.encode("utf-8", "replace"))
