"""The plan as a contract the harness enforces: what each task may do, checked before the plan runs.

A task's type decides what its calls may do (`scope_of`, enforced by the approval policy on every call):
FILE_READ and ANALYSIS only read; COMMAND and VERIFICATION read and run commands; FILE_WRITE reads and
changes the files it declares in `files` (a path ending in `/` covers that folder).

`Contract.problems` checks a plan before it runs (the planner re-asks with these lines; a hand-edited
plan gets them too), each problem one line naming the task:
- a FILE_WRITE task without `files` (plans written before contracts are accepted by `accept_legacy`
  instead: such a task may write anywhere and is ordered with every other writer), or with none in it;
- `files` on a task that writes nothing, or a path the workspace guard refuses (outside the workspace,
  `.git/`, `.paicli/`), that leads through a symlink, or that names an existing folder without its `/`;
- an `action` whose tool is unknown, not allowed for the task's type (read-only tools for FILE_READ,
  commands for COMMAND and VERIFICATION, none for the others) or whose arguments do not validate, or one
  that calls a tool acting outside paicli's view (an MCP tool that is not read-only) where the gate would
  refuse the call: naming no workspace path outside a COMMAND task, or a path the task does not declare;
- two tasks whose `files` overlap while neither depends on the other, even through other tasks: they
  would race on the same file, and the later whole-file write would silently undo the earlier change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from paicli.common.paths import WHOLE_WORKSPACE, Names, normalise
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.plan.task_fields import normalised_files
from paicli.plan.write_sets import order_unbounded, overlap_problems
from paicli.policy.external_scope import NAMES_NO_PATH, outside_write_set
from paicli.tools.base import Effect, Tool, ToolFailure
from paicli.tools.guard import WorkspacePaths
from paicli.tools.task_scope import TaskScope
from paicli.tools.toolbox import describe_validation_error

EFFECTS: dict[TaskType, frozenset[Effect]] = {
    TaskType.FILE_READ: frozenset({Effect.READ}),
    TaskType.ANALYSIS: frozenset({Effect.READ, Effect.NETWORK}),  # research may read the web (fetch_url)
    TaskType.COMMAND: frozenset({Effect.READ, Effect.EXECUTE}),
    TaskType.VERIFICATION: frozenset({Effect.READ, Effect.EXECUTE}),
    TaskType.FILE_WRITE: frozenset({Effect.READ, Effect.WRITE}),
}
# What an action may be, by task type: the effect of its tool.
ACTION_EFFECTS: dict[TaskType, frozenset[Effect]] = {
    TaskType.FILE_READ: frozenset({Effect.READ}),
    TaskType.COMMAND: frozenset({Effect.EXECUTE}),
    TaskType.VERIFICATION: frozenset({Effect.EXECUTE}),
}
DECLARES_FILES = frozenset({TaskType.FILE_WRITE, TaskType.COMMAND, TaskType.VERIFICATION})

ToolLookup = Callable[[str], Tool | None]


def scope_of(task: Task) -> TaskScope:
    """What the task's calls may do. Its declared `files` limit the file tools of a FILE_WRITE task and,
    in the sandbox, what the commands of a COMMAND or VERIFICATION task may write: nothing but tool caches
    when it declares none."""
    writable = tuple(task.files) if task.type in DECLARES_FILES and task.files is not None else None
    if writable is None and task.type in (TaskType.COMMAND, TaskType.VERIFICATION):
        writable = ()  # declares nothing: its commands write nothing in the workspace (in the sandbox)
    if writable is not None and any(normalise(path) == WHOLE_WORKSPACE for path in writable):
        writable = None
    return TaskScope(task.id, task.type.value, EFFECTS[task.type], writable)


def held_to_files(task: Task, *, sandboxed: bool) -> bool:
    """Whether what the task may write is held to its `files`: a FILE_WRITE task's by the gate on every file
    tool call; a command's only by the sandbox. A task that is not may write anywhere, so it never runs
    beside another writer (the scheduler's `unbounded`)."""
    if task.type is TaskType.FILE_WRITE:
        return task.files is not None
    return sandboxed or not may_write(task)


def unheld_commands(plan: Plan, *, sandboxed: bool) -> list[str]:
    """Ids of the PENDING tasks whose commands are not held to their `files` (none without the sandbox)."""
    return [
        task.id
        for task in plan.tasks
        if task.status is TaskStatus.PENDING
        and task.type in (TaskType.COMMAND, TaskType.VERIFICATION)
        and not held_to_files(task, sandboxed=sandboxed)
    ]


def may_write(task: Task) -> bool:
    """Whether running the task may change files (a checkpoint before it is worth taking)."""
    return bool(EFFECTS[task.type] - {Effect.READ, Effect.NETWORK})


@dataclass(frozen=True)
class Contract:
    workspace: Path
    tool: ToolLookup  # the tool of a name (its facts), None for an unknown one
    # Names whose tools are not known yet (MCP tools before the servers start): an action naming one is
    # checked later, by the contract of the running session.
    pending: Callable[[str], bool] | None = None

    def problems(self, plan: Plan, *, require_files: bool = True) -> list[str]:
        """Everything that breaks the contract among the plan's PENDING tasks; [] when it holds."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        found: list[str] = []
        guard = WorkspacePaths(self.workspace)
        for task in pending:
            if task.files is not None:  # a saved plan or an edit comes in as written: the one normal form
                task.files = normalised_files(task.files, task.id, found)
            found += self._task_problems(task, guard, require_files=require_files)
        found += overlap_problems(plan, pending, Names.of(self.workspace))
        return found

    def accept_legacy(self, plan: Plan) -> list[str]:
        """A plan from before contracts (saved, or a `--from` file): each PENDING FILE_WRITE task without
        `files` may write anywhere, so it is ordered with every other writer it is not already ordered with
        (`order_unbounded`, in linear time). Returns the notices to show."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        undeclared = [task for task in pending if task.type is TaskType.FILE_WRITE and task.files is None]
        writers = [task for task in pending if task.files is not None]
        order_unbounded(plan, undeclared, writers)
        if not undeclared:
            return []
        ids = ", ".join(task.id for task in undeclared)
        return [
            f"{ids} declare no files (a plan from before the plan contract): they may write anywhere in the "
            "workspace and run one at a time, never beside another writer"
        ]

    def _task_problems(self, task: Task, guard: WorkspacePaths, *, require_files: bool) -> list[str]:
        found: list[str] = []
        undeclared = task.files == [] or (task.files is None and require_files)  # [] could change nothing at all
        if task.type is TaskType.FILE_WRITE and undeclared:
            found.append(f'task "{task.id}" is FILE_WRITE and must list the paths it may change in "files"')
        elif task.files is not None and task.type not in DECLARES_FILES:
            named = f'task "{task.id}" is {task.type.value}'
            found.append(f'{named}, which changes nothing: drop its "files" (the paths a task may change)')
        elif task.files:
            found += [problem for path in task.files if (problem := self._path_problem(task, path, guard))]
        if task.action is not None:
            found += self._action_problems(task)
        return found

    def _path_problem(self, task: Task, path: str, guard: WorkspacePaths) -> str | None:
        problem = guard.verdicts.get(path)
        if problem is None:
            problem = guard.verdicts[path] = _path_verdict(path, guard)
        return f'task "{task.id}" declares {path}{problem}' if problem else None

    def _action_problems(self, task: Task) -> list[str]:
        assert task.action is not None
        name = task.action.tool
        allowed = ACTION_EFFECTS.get(task.type)
        if allowed is None:
            return [f'task "{task.id}" is {task.type.value} and cannot be one tool call: remove its "action"']
        tool = self.tool(name)
        if tool is None and self.pending is not None and self.pending(name):
            return []
        if tool is None:
            return [f'task "{task.id}" has an action with the unknown tool {name!r}']
        if tool.effect not in allowed:
            kind = "a read-only tool" if task.type is TaskType.FILE_READ else "a command (execute_command)"
            return [f'task "{task.id}" is {task.type.value}: its action must be {kind}, not {name}']
        try:
            tool.Args.model_validate(task.action.args)
        except ValidationError as error:
            return [f'task "{task.id}" has an action with bad arguments: {describe_validation_error(tool, error)}']
        if tool.external and tool.effect is not Effect.READ:
            return self._external_problems(task, name)
        return []

    def _external_problems(self, task: Task, name: str) -> list[str]:
        """An action of a tool that acts outside paicli's view (an MCP tool that is not read-only) is held to
        the rule the gate applies to a model's call of it (paicli/policy/external_scope.py), here up front."""
        assert task.action is not None
        named = outside_write_set(scope_of(task), task.action.args, self.workspace)
        if named is None:
            return []
        head = f'task "{task.id}" is {task.type.value}: its action {name} may change things outside paicli\'s view'
        if named == NAMES_NO_PATH:
            return [f"{head} and names no workspace path; only a COMMAND task may run it"]
        return [f'{head}, here {named}, which the task does not declare in "files"']


def _path_verdict(path: str, guard: WorkspacePaths) -> str:
    """What is wrong with a declared path, as the end of a sentence ("declares PATH" + this); "" if nothing."""
    if path == WHOLE_WORKSPACE:
        return ""
    root = str(guard.root)
    try:
        resolved = str(guard.resolve(path.rstrip("/"), for_write=True))
    except ToolFailure as refusal:
        return f": {str(refusal).removeprefix('refused: ')}"
    if resolved != os.path.normpath(os.path.join(root, path)):
        shown = Path(os.path.relpath(resolved, root)).as_posix()
        return f", which leads through a symlink to {shown}; declare {shown}"
    if not path.endswith("/") and os.path.isdir(resolved):
        # The gate would let the task change only the folder itself, nothing in it.
        return f", which is a folder; write {path}/ to cover what is in it"
    return ""
