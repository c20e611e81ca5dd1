"""The plan contract in the gate: a call outside its task's scope never runs, in any approval mode.

The model gets a refusal that says what the task may do and how to report what else is needed, e.g.
`refused: out of scope: task_3 (FILE_WRITE) may read, and change only app.py. Say in your answer what
else must change.`
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paicli.common import paths
from paicli.policy.external_scope import external_out_of_scope
from paicli.tools.base import Effect, Tool, ToolFailure
from paicli.tools.guard import resolve_in_workspace
from paicli.tools.task_scope import TaskScope

ADVICE = {
    Effect.WRITE: "Say in your answer what else must change; the plan will take care of it.",
    Effect.EXECUTE: "Say in your answer what must be run; the plan will take care of it.",
}


def out_of_scope(scope: TaskScope, tool: Tool | None, arguments: Mapping[str, Any], workspace: Path) -> str | None:
    """Why this call is outside the task's scope (the message for the model), or None. `tool` None is a
    tool with no known facts: it counts as executing."""
    effect = tool.effect if tool is not None else Effect.EXECUTE
    if tool is not None and tool.external and effect is not Effect.READ:
        return external_out_of_scope(scope, arguments, workspace)
    if effect not in scope.effects:
        return f"out of scope: {scope.describe()}. {ADVICE.get(effect, '')}".rstrip()
    if effect is Effect.WRITE and scope.writable is not None:
        if tool is None or tool.path_argument is None or not tool.confined:
            return f"out of scope: {scope.describe()}. {ADVICE[Effect.WRITE]}"
        raw = arguments.get(tool.path_argument)
        if isinstance(raw, str) and not _declared(workspace, raw, scope.writable):
            return f"out of scope: {scope.describe()}; {raw} is not among them. {ADVICE[Effect.WRITE]}"
    return None


def _declared(workspace: Path, raw: str, writable: tuple[str, ...]) -> bool:
    """Whether `raw` (as the guard resolves it: symlinks followed) is a declared file or lies below a
    declared folder. A path the guard refuses is left to the guard (its message is the better one)."""
    try:
        target = resolve_in_workspace(workspace, raw, for_write=True)
    except ToolFailure:
        return True
    root = Path(os.path.realpath(workspace))
    relative = target.relative_to(root).as_posix() if target != root else paths.WHOLE_WORKSPACE
    names = paths.Names.of(root)  # README.md is readme.md where the filesystem says so
    for entry in writable:
        # Taken as written, never through a symlink: a declared `tests/` that links to `.` covers tests/ only.
        declared = paths.normalise(entry)
        if declared is not None and declared != paths.WHOLE_WORKSPACE and names.covers(declared, relative):
            return True
    return False
