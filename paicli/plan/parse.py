"""Turn a planner reply into a validated `Plan`: lenient about form, strict about content.

Every rejection is a `PlanError` whose message is one line the model can act on; the planner sends it
back verbatim when it re-asks.

Read leniently:
- the JSON may sit in a ```json (or unlabelled) code fence, or in prose; fences labelled with another
  language (```bash) are ignored;
- trailing commas, single quotes, comments, missing commas (repaired by `json_repair`, but only on a
  span whose brackets and strings are balanced; see truncation below);
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
- any `{` or `[` left unclosed, or a string left open, in the scanned text: the reply looks cut off, and
  it is never "repaired" into a shorter plan;
- an empty reply, a reply without JSON, JSON without a task list;
- two or more *different* plans (objects with a task list, or bare arrays of objects of which one at
  least has an id, description, title or name): ambiguous. Other JSON next to exactly one plan (an
  example object or `[]` in the prose) is ignored; the same plan repeated counts once;
- no tasks; more than `max_tasks` tasks; a blank or duplicate id; an empty description; a dependency on
  an id that is neither in the plan nor in `external_ids`; a self-dependency; a cycle (shown as
  "task_2 → task_4 → task_2").
All problems of the task list are reported together, so one re-ask can fix them all.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection
from typing import Any

import json_repair

from paicli.errors import PlanError
from paicli.plan import dag
from paicli.plan.model import Plan, Task, TaskType

_JSON_FENCE_LABELS = {"", "json", "json5", "jsonc", "js", "javascript"}
_STRUCTURE = re.compile(r"[{}\[\]\"'/]")
_STRING_END = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_OPENER = re.compile(r"[{\[]")
_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL)  # reasoning models
_FENCE = re.compile(r"^ {0,3}```(?P<info>.*)$")
_DEPENDENCY_KEYS = ("dependencies", "depends_on", "dependsOn", "deps", "depends", "dependency")
_ID_KEYS = ("id", "task_id", "taskId")
_TYPE_KEYS = ("type", "task_type", "taskType", "kind")
_TASK_KEYS = {"id", "task_id", "taskId", "description", "title", "name"}
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
    if not text.strip():
        raise PlanError('the reply was empty; reply with the plan as one JSON object {"summary", "tasks"}')
    summary, raw_tasks = _find_plan(text)
    tasks = _normalize_tasks(raw_tasks, max_tasks=max_tasks, external_ids=external_ids, round=round)
    return Plan(goal=goal, summary=summary, tasks=tasks, round=round)


# ---- finding the JSON -----------------------------------------------------------------------------


def json_values(text: str) -> list[Any]:
    """Every top-level JSON value in a model reply (fenced or in prose), each loaded leniently.

    PlanError when any `{`, `[` or string is left open: the reply looks cut off and is never repaired
    into something shorter. Also used for the reviewer's `{"score", "reflection"}` reply.
    """
    spans: list[str] = []
    for segment in _segments(_THINKING.sub("", text)):
        found, unterminated = _balanced_spans(segment)
        if unterminated:
            raise PlanError(
                "the JSON in the reply is unterminated (an unclosed {, [ or string), so the reply looks "
                "cut off; reply with the complete plan as one JSON object"
            )
        spans.extend(found)
    return [value for value in map(_load, spans) if value is not None]


def _find_plan(text: str) -> tuple[str, list[Any]]:
    values = json_values(text)
    plans: list[tuple[str, list[Any]]] = []
    for value in values:
        plan = _as_plan(value)
        if plan is not None and plan not in plans:
            plans.append(plan)
    if len(plans) > 1:
        raise PlanError(f"the reply contains {len(plans)} different JSON plans; reply with exactly one plan object")
    if plans:
        return plans[0]
    if [] in values:
        raise PlanError("the plan has no tasks; a plan needs at least one task")
    if values:
        raise PlanError(
            'the JSON in the reply has no "tasks" array; reply with {"summary": "…", "tasks": '
            '[{"id": "task_1", "description": "…", "type": "ANALYSIS", "dependencies": []}]}'
        )
    raise PlanError(
        'the reply contains no JSON; reply with only the plan as one JSON object {"summary": "…", '
        '"tasks": [{"id": "task_1", "description": "…", "type": "ANALYSIS", "dependencies": []}]}'
    )


def _segments(text: str) -> list[str]:
    """The parts of the text to scan: each JSON-ish fence's content and the prose around fences.

    A fence is a line starting with ``` (markdown's rule), so backticks inside a JSON string do not
    count. An unclosed fence runs to the end of the text. Fences labelled with another language are
    skipped. `` ```{...}``` `` on one line is a fence too.
    """
    segments: list[str] = []
    current: list[str] = []
    label: str | None = None  # None: outside a fence
    for line in text.split("\n"):
        fence = _FENCE.match(line)
        if fence is None:
            current.append(line)
        elif label is not None:
            if fence.group("info").strip():  # ``` followed by text inside a block: content
                current.append(line)
                continue
            if label in _JSON_FENCE_LABELS:  # the closing fence
                segments.append("\n".join(current))
            current = []
            label = None
        else:
            segments.append("\n".join(current))
            current = []
            info = fence.group("info")
            if re.fullmatch(r"\s*[\w+.-]*\s*", info):
                label = info.strip().lower()
            elif info.rstrip().endswith("```"):  # a one-line fenced block
                segments.append(info.rstrip()[:-3])
            else:  # no label: the content starts on the fence line
                label = ""
                current.append(info)
    if label is None or label in _JSON_FENCE_LABELS:
        segments.append("\n".join(current))
    return segments


def _balanced_spans(segment: str) -> tuple[list[str], bool]:
    """Top-level {…} / […] spans; True as well if one runs to the end unclosed."""
    spans: list[str] = []
    position = 0
    while (opener := _OPENER.search(segment, position)) is not None:
        end = _span_end(segment, opener.start())
        if end < 0:
            return spans, True
        spans.append(segment[opener.start() : end])
        position = end
    return spans, False


def _span_end(text: str, start: int) -> int:
    """Index just past the bracket closing the one at `start`; -1 if the text ends first."""
    depth = 0
    position = start
    while (match := _STRUCTURE.search(text, position)) is not None:
        char, at = match.group(), match.start()
        position = at + 1
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return position
        elif char in "\"'":
            position = _string_end(text, at + 1, char)
            if position < 0:
                return -1
        elif text.startswith("//", at):
            newline = text.find("\n", at)
            position = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", at):
            close = text.find("*/", at + 2)
            if close < 0:
                return -1
            position = close + 2
    return -1


def _string_end(text: str, position: int, quote: str) -> int:
    pattern = _STRING_END[quote]
    while (match := pattern.search(text, position)) is not None:
        if match.group() == "\\":
            position = match.start() + 2
            continue
        return match.start() + 1
    return -1


def _load(span: str) -> Any:
    try:
        return json.loads(span, strict=False)
    except ValueError:
        pass
    try:
        value = json_repair.loads(span)
    except Exception:  # json_repair has no documented error type; anything here means "not JSON"
        return None
    return None if value == "" else value


def _as_plan(value: Any) -> tuple[str, list[Any]] | None:
    """(summary, raw tasks) if the value is a plan object or a bare array of task objects."""
    if isinstance(value, list):  # a bare task array: objects, at least one of them looking like a task
        if value and all(isinstance(item, dict) for item in value) and any(_TASK_KEYS & item.keys() for item in value):
            return "", value
        return None
    if not isinstance(value, dict):
        return None
    if "tasks" not in value and "steps" not in value:
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
        raise PlanError(f'"tasks" must be an array of task objects, not {_json_kind(tasks)}')
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
            problems.append(f"task #{number} is {_json_kind(raw)}, not a JSON object")
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
        description = _read_description(raw)
        if not description:
            problems.append(f'task "{task_id}" has an empty "description"')
        dependencies = _read_dependencies(raw, task_id, known, problems)
        tasks.append(
            Task(
                id=task_id,
                description=description,
                type=TaskType.lenient(_first(raw, _TYPE_KEYS)),
                dependencies=dependencies,
                round=round,
            )
        )
    problems.extend(dag.validate({task.id: task.dependencies for task in tasks}, external_ids))
    if problems:
        shown = "; ".join(problems[:_MAX_REPORTED])
        more = len(problems) - _MAX_REPORTED
        raise PlanError(shown + (f"; and {more} more problems" if more > 0 else ""))
    return tasks


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


def _read_dependencies(raw: dict[str, Any], task_id: str, known: set[str], problems: list[str]) -> list[str]:
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


def _split_dependency_text(text: str, known: set[str]) -> list[str]:
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


def _json_kind(value: Any) -> str:
    kinds = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array"}
    if value is None:
        return "null"
    return kinds.get(type(value), "an object")
