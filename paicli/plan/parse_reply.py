"""Turn a planner reply into a validated `Plan`: lenient about form, strict about content.

Every rejection is a `PlanError` whose message is one line the model can act on; the planner sends it
back verbatim when it re-asks.

Read leniently (finding the JSON is `paicli.plan.jsonscan`'s job, bounded in time and depth):
- the JSON may sit in a ```json (or unlabelled) code fence, or in prose; fences labelled with another
  language (```bash) are ignored;
- trailing commas, single quotes, comments, missing commas (repaired by `json_repair`, but only on a
  span whose brackets and strings are balanced and that is short enough; see truncation below);
- a bare array of tasks instead of `{"summary", "tasks"}`; `"steps"` for `"tasks"`; a `{"plan": {...}}`
  wrapper; `"tasks"` given as an object keyed by id;
- `depends_on` / `dependsOn` / `deps` / `depends` / `dependency` for `dependencies`; dependencies given
  as a string ("task_1, task_2"), a single id, null or "none"; numeric ids and dependencies (1 → "1");
- `type` in any case, with `-` or space for `_`; a missing or unknown type becomes ANALYSIS;
- `title` or `name` when `description` is missing or blank.

Ignored: `<think>…</think>` blocks (reasoning models put them before the answer).

Repaired silently (safe, meaning-preserving): whitespace around ids, dependencies and descriptions is
trimmed; repeated dependency entries and blank ones are dropped.

Rejected:
- `finish_reason == "length"`: always, whatever the text looks like (the reply was cut off);
- a reply longer than `max_chars`; JSON nested deeper than `jsonscan.MAX_DEPTH` ("nested too deeply");
  more than `jsonscan.MAX_VALUES` separate JSON values; a span that is not strict JSON and too long to
  repair;
- any `{` or `[` left unclosed, or a string left open, in the scanned text: the reply looks cut off, and
  it is never "repaired" into a shorter plan;
- an empty reply, a reply without JSON, JSON without a task list;
- two or more *different* plans (objects with a task list, or bare arrays of objects of which one at
  least has an id, description, title or name): ambiguous, and the scan stops at the second. Other
  JSON next to exactly one plan (an example object or `[]` in the prose) is ignored; the same plan
  repeated counts once; a span too long to repair next to a plan is not ignored (it may be a plan);
- no tasks; more than `max_tasks` tasks; a blank, duplicate or over-long id; an empty description; a
  dependency on an id that is neither in the plan nor in `external_ids`; a self-dependency; a cycle
  (shown as "task_2 → task_4 → task_2").
All problems of the task list are reported together, so one re-ask can fix them all.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection
from typing import Any

from paicli.common.errors import PlanError
from paicli.common.sanitize import well_formed_json
from paicli.plan import dag, jsonscan
from paicli.plan.jsonscan import Unreadable, json_values
from paicli.plan.model import Plan, Task, TaskType
from paicli.plan.task_fields import read_action, read_files
from paicli.tools.arguments import json_kind

MAX_REPLY_CHARS = 1_000_000  # a 50-task plan is about 20,000; a --from file passes its own, larger cap
MAX_ID_CHARS = 100
_DEPENDENCY_KEYS = ("dependencies", "depends_on", "dependsOn", "deps", "depends", "dependency")
_ID_KEYS = ("id", "task_id", "taskId")
_TYPE_KEYS = ("type", "task_type", "taskType", "kind")
_TASK_KEYS = {"id", "task_id", "taskId", "description", "title", "name"}
TASK_LIST_KEYS = ("tasks", "steps")  # the keys a task list may sit under, in order of preference
_NO_DEPENDENCIES = {"", "none", "null", "n/a", "-", "[]"}
_MAX_REPORTED = 6


def parse_plan_reply(
    text: str,
    *,
    finish_reason: str | None,
    goal: str,
    max_tasks: int = 50,
    external_ids: Collection[str] = frozenset(),
    round: int = 1,
    max_chars: int = MAX_REPLY_CHARS,
) -> Plan:
    """The plan in a model reply; PlanError (one line, actionable) when there is none to accept.

    `external_ids` are ids the tasks may depend on without declaring them (tasks completed in earlier
    rounds). The tasks keep the model's order; `Plan.topological_order()` gives the order to run them.
    """
    if finish_reason == "length":
        raise PlanError(
            'the reply was cut off at the token limit (finish_reason "length"); '
            "reply again with a shorter plan: fewer tasks and shorter descriptions"
        )
    if len(text) > max_chars:
        raise PlanError(
            f"the reply is {len(text):,} characters long, more than the limit of {max_chars:,}; "
            "reply with a shorter plan: fewer tasks and shorter descriptions"
        )
    if not text.strip():
        raise PlanError('the reply was empty; reply with the plan as one JSON object {"summary", "tasks"}')
    summary, raw_tasks = _find_plan(text)
    tasks = _normalize_tasks(raw_tasks, max_tasks=max_tasks, external_ids=external_ids, round=round)
    return Plan(goal=goal, summary=summary, tasks=tasks, round=round)


# ---- finding the plan ----------------------------------------------------------------------------


def _find_plan(text: str) -> tuple[str, list[Any]]:
    """The one plan in the reply. Stops at the second different plan: a reply of 40,000 candidates is
    rejected after two of them, not compared pairwise. A reply (or a file) that is one JSON plan and
    nothing else is read in one step: a 10,000-task `--from` file is not scanned character by character."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            whole = well_formed_json(json.loads(stripped))
        except (ValueError, RecursionError):
            whole = None
        if _within_depth(whole, jsonscan.MAX_DEPTH) and (plan := _as_plan(whole)) is not None:
            return plan
    plans: list[tuple[str, list[Any]]] = []
    unreadable: Unreadable | None = None
    saw_value = saw_empty_list = False
    for value in json_values(text):
        if isinstance(value, Unreadable):
            unreadable = unreadable or value
            continue
        saw_value = True
        plan = _as_plan(value)
        if plan is None:
            saw_empty_list = saw_empty_list or value == []
        elif plan not in plans:
            plans.append(plan)
            if len(plans) > 1:
                raise PlanError(
                    "the reply contains 2 different JSON plans (at least); reply with exactly one plan object"
                )
    if unreadable is not None:  # it may have been a second plan: never guess
        raise PlanError(unreadable.reason)
    if plans:
        return plans[0]
    if saw_empty_list:
        raise PlanError("the plan has no tasks; a plan needs at least one task")
    if saw_value:
        raise PlanError(
            'the JSON in the reply has no "tasks" array; reply with {"summary": "…", "tasks": '
            '[{"id": "task_1", "description": "…", "type": "ANALYSIS", "dependencies": []}]}'
        )
    raise PlanError(
        'the reply contains no JSON; reply with only the plan as one JSON object {"summary": "…", '
        '"tasks": [{"id": "task_1", "description": "…", "type": "ANALYSIS", "dependencies": []}]}'
    )


def _within_depth(value: Any, limit: int) -> bool:
    """Whether no array or object in `value` lies deeper than `limit` levels (the scan's own limit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        children = current.values() if isinstance(current, dict) else current if isinstance(current, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return False
                stack.append((child, depth + 1))
    return True


def _as_plan(value: Any) -> tuple[str, list[Any]] | None:
    """(summary, raw tasks) if the value is a plan object or a bare array of task objects."""
    if isinstance(value, list):  # a bare task array: objects, at least one of them looking like a task
        if value and all(isinstance(item, dict) for item in value) and any(_TASK_KEYS & item.keys() for item in value):
            return "", value
        return None
    if not isinstance(value, dict):
        return None
    if not any(key in value for key in TASK_LIST_KEYS):
        inner = value.get("plan")
        return _as_plan(inner) if isinstance(inner, dict | list) else None
    summary = value.get("summary")
    return (summary.strip() if isinstance(summary, str) else ""), _task_list(value)


def _task_list(plan: dict[str, Any]) -> list[Any]:
    tasks = plan["tasks"] if "tasks" in plan else plan["steps"]
    if isinstance(tasks, dict):  # {"task_1": {...}, ...}: the key is the id
        return [
            {"id": key, **item} if isinstance(item, dict) and "id" not in item else item for key, item in tasks.items()
        ]
    if not isinstance(tasks, list):
        raise PlanError(f'"tasks" must be an array of task objects, not {json_kind(tasks)}')
    return tasks


# ---- normalizing and validating the tasks ---------------------------------------------------------


def _normalize_tasks(raw_tasks: list[Any], *, max_tasks: int, external_ids: Collection[str], round: int) -> list[Task]:
    if not raw_tasks:
        raise PlanError("the plan has no tasks; a plan needs at least one task")
    if len(raw_tasks) > max_tasks:
        raise PlanError(
            f"the plan has {len(raw_tasks)} tasks, more than the limit of {max_tasks}; "
            "merge small steps into fewer, larger tasks"
        )
    problems: list[str] = []
    ids: list[str | None] = []
    for number, raw in enumerate(raw_tasks, start=1):
        if not isinstance(raw, dict):
            problems.append(f"task #{number} is {json_kind(raw)}, not a JSON object")
            ids.append(None)
            continue
        ids.append(_read_id(raw, number, problems))
    counts = Counter(task_id for task_id in ids if task_id is not None)
    problems.extend(
        f'task id "{task_id}" is used by {count} tasks; give every task its own id'
        for task_id, count in counts.items()
        if count > 1
    )
    known = set(counts) | set(external_ids)
    tasks: list[Task] = []
    seen: set[str] = set()
    for raw, task_id in zip(raw_tasks, ids, strict=True):
        if task_id is None or task_id in seen:
            continue
        seen.add(task_id)
        tasks.append(_task(raw, task_id, known, problems, round))
    problems.extend(dag.validate({task.id: task.dependencies for task in tasks}, external_ids))
    if problems:
        raise PlanError(joined(problems))
    return tasks


def read_task(raw: Any, number: int, known: Collection[str], problems: list[str], *, round: int = 1) -> Task | None:
    """One task object of a reply read by the rules above (the streamed parser reads each task with it):
    None when it is not an object or has no usable id. `known`: the ids a dependency string may name;
    `number`: the task's place in the reply (1 is the first), for the problems appended."""
    if not isinstance(raw, dict):
        problems.append(f"task #{number} is {json_kind(raw)}, not a JSON object")
        return None
    task_id = _read_id(raw, number, problems)
    return None if task_id is None else _task(raw, task_id, known, problems, round)


def _task(raw: dict[str, Any], task_id: str, known: Collection[str], problems: list[str], round: int) -> Task:
    description = _read_description(raw)
    if not description:
        problems.append(f'task "{task_id}" has an empty "description"')
    return Task(
        id=task_id,
        description=description,
        type=TaskType.lenient(_first(raw, _TYPE_KEYS)),
        dependencies=_read_dependencies(raw, task_id, known, problems),
        files=read_files(raw, task_id, problems),
        action=read_action(raw, task_id, problems),
        round=round,
    )


def is_plan_object(value: dict[str, Any]) -> bool:
    """Whether an object holds a plan (a task list or a `plan` wrapper) rather than being one task."""
    return any(key in value for key in TASK_LIST_KEYS) or isinstance(value.get("plan"), dict | list)


def joined(problems: list[str]) -> str:
    """Several problems as one message, so one re-ask can fix them all (the first few, then a count)."""
    shown = "; ".join(problems[:_MAX_REPORTED])
    more = len(problems) - _MAX_REPORTED
    return shown + (f"; and {more} more problems" if more > 0 else "")


def _first(raw: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in raw:
            return raw[key]
    return None


def _read_id(raw: dict[str, Any], number: int, problems: list[str]) -> str | None:
    value = _first(raw, _ID_KEYS)
    task_id = _as_id(value)
    if task_id is None:
        shown = json.dumps(value, ensure_ascii=False)[:40]
        problems.append(
            f'task #{number} has no "id"'
            if value is None
            else f'task #{number} has an invalid "id" ({shown}); use a string like "task_{number}"'
        )
    elif not task_id:
        problems.append(f'task #{number} has a blank "id"')
        return None
    elif len(task_id) > MAX_ID_CHARS:
        problems.append(
            f'task #{number} has an "id" of {len(task_id):,} characters (at most {MAX_ID_CHARS}); '
            f'use a short id like "task_{number}"'
        )
        return None
    return task_id


def _as_id(value: Any) -> str | None:
    """A task id as text: strings trimmed, whole numbers written without a fraction; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value.strip()
    return None


def _read_description(raw: dict[str, Any]) -> str:
    for key in ("description", "title", "name"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _read_dependencies(raw: dict[str, Any], task_id: str, known: Collection[str], problems: list[str]) -> list[str]:
    value = _first(raw, _DEPENDENCY_KEYS)
    items: list[Any]
    if value is None:
        items = []
    elif isinstance(value, str):
        items = _split_dependency_text(value, known)
    elif isinstance(value, list):
        items = [item.get("id") if isinstance(item, dict) else item for item in value]
    else:
        items = [value]
    dependencies: list[str] = []
    for item in items:
        dep = _as_id(item)
        if dep is None:
            problems.append(f'task "{task_id}" has "dependencies" that are not a list of task ids')
            return []
        if dep and dep not in dependencies:
            dependencies.append(dep)
    return dependencies


def _split_dependency_text(text: str, known: Collection[str]) -> list[str]:
    """ "task_1, task_2" or "task_1 task_2" or a single id (even one containing spaces)."""
    text = text.strip()
    if text.lower() in _NO_DEPENDENCIES:
        return []
    if text in known:
        return [text]
    parts: list[str] = []
    for part in re.split(r"[,;]", text):
        part = part.strip()
        parts.extend([part] if part in known else part.split())
    return parts
