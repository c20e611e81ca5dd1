"""Reading a task's contract fields from a planner reply (or a hand-written plan): `files` and `action`.

Lenient about form: `writes`/`paths` for `files`, a single path for a list, `tool_call` for `action`,
`name`/`arguments`/`parameters` inside it, arguments given as a JSON string. Strict about content: each
problem is one line naming the task, and the planner re-asks with it. What needs the workspace or the
tool box (paths inside the workspace, a tool's arguments, overlaps) is checked in paicli/plan/contract.py.
"""

from __future__ import annotations

import json
from typing import Any

from paicli.common import paths
from paicli.common.sanitize import well_formed_json
from paicli.plan.model import TaskAction
from paicli.tools.arguments import MAX_DEPTH, nested_deeper_than

FILES_KEYS = ("files", "writes", "paths")
ACTION_KEYS = ("action", "tool_call")
_TOOL_KEYS = ("tool", "name")
_ARGS_KEYS = ("args", "arguments", "parameters")
MAX_FILES = 200
_ACTION_SHAPE = '{"tool": "read_file", "args": {"path": "src/app.py"}}'


def read_files(raw: dict[str, Any], task_id: str, problems: list[str]) -> list[str] | None:
    """The declared paths, normalised (`./a.py` is `a.py`; a folder keeps its `/`); None when absent."""
    key = next((k for k in FILES_KEYS if k in raw), None)
    if key is None or raw[key] is None:
        return None
    value = raw[key]
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        problems.append(f'task "{task_id}" has "files" that are not a list of paths')
        return None
    if len(items) > MAX_FILES:
        problems.append(f'task "{task_id}" declares {len(items)} files, more than {MAX_FILES}; name folders ("src/")')
        return None
    return normalised_files(items, task_id, problems)


def normalised_files(items: list[str], task_id: str, problems: list[str]) -> list[str]:
    """The declared paths in their normal form (paicli/common/paths.py), each once; what cannot be declared
    goes to `problems`. Every route a plan comes by (a reply, a file, an edit, a saved plan) passes here."""
    files: list[str] = []
    for item in items:
        path = paths.normalise(item)
        if path is None:
            problems.append(f'task "{task_id}" has an empty path in "files"')
        elif problem := paths.declared_problem(path):
            problems.append(f'task "{task_id}" {problem}')
        elif path not in files:
            files.append(path)
    return files


def read_action(raw: dict[str, Any], task_id: str, problems: list[str]) -> TaskAction | None:
    key = next((k for k in ACTION_KEYS if k in raw), None)
    if key is None or raw[key] is None:
        return None
    value = raw[key]
    tool = next((value[k] for k in _TOOL_KEYS if k in value), None) if isinstance(value, dict) else None
    if not isinstance(tool, str) or not tool.strip():
        problems.append(f'task "{task_id}" has an "action" without a tool name; write it as {_ACTION_SHAPE}')
        return None
    args: Any = next((value[k] for k in _ARGS_KEYS if k in value), {})
    if isinstance(args, str):
        if nested_deeper_than(args):
            problems.append(
                f'task "{task_id}" has "action" arguments nested more than {MAX_DEPTH} levels deep; '
                f"write {_ACTION_SHAPE}"
            )
            return None
        try:
            args = well_formed_json(json.loads(args)) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            args = None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        problems.append(f'task "{task_id}" has "action" arguments that are not a JSON object; write {_ACTION_SHAPE}')
        return None
    return TaskAction(tool=tool.strip(), args=args)
