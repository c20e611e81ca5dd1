"""A plan as text the user edits in `$EDITOR`, and back, validated by the planner's own rules.

The format (also explained in the header comment of every file written):

    summary: what the plan does (may continue on the following lines)

    ## task_1 [FILE_READ]
    Read src/app.py and note where the configuration is loaded.

    ## task_2 [FILE_WRITE] after: task_1
    files: src/app.py, tests/
    Load the configuration once, at start-up.

    ## task_3 [VERIFICATION] after: task_2
    action: execute_command {"command": "pytest -q"}
    Run the tests.

- A task starts with `## <id> [<TYPE>]`, optionally followed by `after: <ids>` (separated by commas or
  spaces; `after: none` or no `after:` means no dependencies). Its description is every line up to the
  next task header; leading and trailing blank lines are dropped.
- TYPE is one of FILE_READ, FILE_WRITE, COMMAND, ANALYSIS, VERIFICATION, or a badge shown in the plan
  view (READ, WRITE, CMD, THINK, CHECK), in any case.
- Right after the header, `files: <paths>` declares what the task may change (required for FILE_WRITE; a
  path ending in `/` covers that folder) and `action: <tool> <JSON arguments>` makes the task one exact
  tool call run without the model.
- Lines starting with `#` that are not task headers are comments. A description line that itself
  starts with `#` or `\\` is written with a `\\` in front, and that one `\\` is removed when read.
- Tasks finished in earlier rounds are listed as comments: they are kept exactly as they were,
  whatever the file says, and new tasks may depend on the completed ones.

Validation is `paicli.plan.parse_reply.parse_plan_reply` (duplicate or blank ids, empty descriptions, unknown
dependencies, cycles shown as "task_2 → task_4 → task_2"); problems with the text itself name the line.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from paicli.common.errors import PaicliError, PlanError
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.plan.parse_reply import parse_plan_reply
from paicli.tools.arguments import MAX_DEPTH, nested_deeper_than
from paicli.ui.plan.plan_view import STATUS_ICONS, TYPE_BADGES, fold

HEADER = re.compile(r"^##(?:\s+(?P<rest>.*))?$")
HEADER_PARTS = re.compile(r"^(?P<id>[^\s\[\]]+)(?:\s*\[(?P<type>[^\]]*)\])?(?:\s+after\b\s*:?\s*(?P<deps>.*))?$")
SUMMARY = re.compile(r"^summary\s*:(?P<text>.*)$", re.IGNORECASE)
FIELD = re.compile(r"^(?P<name>files|action)\s*:(?P<value>.*)$", re.IGNORECASE)
NO_DEPENDENCIES = {"", "none", "-", "nothing"}
TYPE_NAMES: dict[str, TaskType] = {
    **{task_type.value: task_type for task_type in TaskType},
    **{label: task_type for task_type, (label, _) in TYPE_BADGES.items()},
}

FORMAT_HELP = """\
# paicli plan: edit it, save, and close the editor. The plan is checked when you close it; if it has
# problems you are told which, and can edit this same text again.
#
# Format:
#   summary: one or more lines saying what the plan does
#   ## <id> [<TYPE>] after: <id>, <id>     starts a task; leave out "after:" when it depends on nothing
#   files: <path>, <path>/                right after the header: what it may change (FILE_WRITE needs it)
#   action: <tool> {"arg": "value"}        right after the header: one exact tool call, no model request
#   <description lines>                   until the next "## " line
# TYPE: FILE_READ, FILE_WRITE, COMMAND, ANALYSIS or VERIFICATION (or READ, WRITE, CMD, THINK, CHECK).
# Other lines starting with "#" are comments. Start a description line with "\\" to begin it with "#".
# Delete a task's block to remove it; add a block to add one. Ids must be unique.
"""


def plan_to_text(plan: Plan) -> str:
    """The editable text of a plan; `text_to_plan(plan_to_text(plan), plan)` gives the same plan back."""
    lines = FORMAT_HELP.splitlines()
    locked = locked_tasks(plan)
    locked_ids = {task.id for task in locked}
    if locked:
        lines += ["#", "# Finished in earlier rounds (kept as they are; tasks may depend on the completed ones):"]
        for task in locked:
            icon = STATUS_ICONS[task.status][0]
            lines.append(f"#   {icon} {task.id} [{task.type.value}] {task.status.value}: {fold(task.description)}")
    lines.append("")
    summary = plan.summary.strip().splitlines() or [""]
    lines.append(f"summary: {summary[0]}".rstrip())
    lines.extend(_escape(line) for line in summary[1:])
    for task in plan.tasks:
        if task.id in locked_ids:
            continue
        lines.append("")
        header = f"## {task.id} [{task.type.value}]"
        if task.dependencies:
            header += " after: " + ", ".join(task.dependencies)
        lines.append(header)
        if task.files is not None:
            lines.append("files: " + ", ".join(task.files))
        if task.action is not None:
            lines.append(f"action: {task.action.tool} {json.dumps(task.action.args, ensure_ascii=False)}")
        lines.extend(_escape(line) for line in task.description.strip().splitlines())
    return "\n".join(lines) + "\n"


def text_to_plan(text: str, original: Plan, *, max_tasks: int = 50) -> Plan:
    """The plan the edited text describes; PlanError naming the line or the task when it is not valid.

    The result keeps the original's goal, status and round; the tasks finished in earlier rounds are
    copied from the original unchanged, ahead of the edited ones.
    """
    locked = locked_tasks(original)
    locked_ids = {task.id for task in locked}
    summary, raw_tasks = _read(text)
    reused = [raw["id"] for raw in raw_tasks if raw["id"] in locked_ids]
    if reused:
        raise PlanError(
            "task ids already used by tasks finished in an earlier round: "
            + ", ".join(f'"{task_id}"' for task_id in reused)
            + "; give new tasks new ids"
        )
    completed = {task.id for task in locked if task.status is TaskStatus.COMPLETED}
    edited = parse_plan_reply(
        json.dumps({"summary": summary, "tasks": raw_tasks}),
        finish_reason=None,
        goal=original.goal,
        max_tasks=max_tasks,
        external_ids=completed,
        round=original.round,
    )
    return original.model_copy(
        update={
            "summary": edited.summary,
            "tasks": [task.model_copy(deep=True) for task in locked] + edited.tasks,
        }
    )


def locked_tasks(plan: Plan) -> list[Task]:
    """Tasks that are not the user's to edit: every task no longer PENDING (finished, or running)."""
    return [task for task in plan.tasks if task.status is not TaskStatus.PENDING]


# ---- reading the text ----------------------------------------------------------------------------


def _read(text: str) -> tuple[str, list[dict[str, object]]]:
    """(summary, raw tasks in the plan JSON shape); PlanError for lines that fit no part of the format."""
    summary_lines: list[str] | None = None
    tasks: list[dict[str, object]] = []
    description: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = HEADER.match(line.rstrip())
        if header:
            _close(tasks, description)
            tasks.append(_read_header(header.group("rest") or "", number))
            continue
        if line.startswith("#"):
            continue  # a comment
        content = line[1:] if line.startswith("\\") else line
        field = FIELD.match(line) if tasks and not description else None
        if field:
            _read_field(tasks[-1], field.group("name").lower(), field.group("value").strip(), number)
        elif tasks:
            description.append(content)
        elif summary_lines is None:
            match = SUMMARY.match(line.strip())
            if match:
                summary_lines = [match.group("text").strip()]
            elif line.strip():
                raise PlanError(
                    f'line {number}: "{fold(line)[:60]}" is outside any task; '
                    'start the plan with "summary: …" and each task with "## <id> [<TYPE>]"'
                )
        else:
            summary_lines.append(content)
    _close(tasks, description)
    return "\n".join(summary_lines or []).strip(), tasks


def _read_header(rest: str, number: int) -> dict[str, object]:
    parts = HEADER_PARTS.match(rest.strip())
    if not parts:
        raise PlanError(
            f'line {number}: cannot read the task header "## {fold(rest)[:60]}"; '
            "write it as ## <id> [<TYPE>] after: <id>, <id>"
        )
    task_id = parts.group("id")
    type_name = (parts.group("type") or "").strip()
    if not type_name:
        raise PlanError(
            f'line {number}: task "{task_id}" has no type; write it as ## {task_id} [<TYPE>] with TYPE one of '
            + ", ".join(TaskType)
        )
    task_type = TYPE_NAMES.get(type_name.upper().replace("-", "_").replace(" ", "_"))
    if task_type is None:
        raise PlanError(
            f'line {number}: task "{task_id}" has the unknown type [{fold(type_name)}]; use one of '
            + ", ".join(TaskType)
        )
    deps_text = (parts.group("deps") or "").strip()
    dependencies = [] if deps_text.lower() in NO_DEPENDENCIES else re.split(r"[\s,;]+", deps_text)
    return {"id": task_id, "type": task_type.value, "dependencies": [dep for dep in dependencies if dep]}


def _read_field(task: dict[str, object], name: str, value: str, number: int) -> None:
    """`files: a.py, tests/` or `action: execute_command {"command": "pytest -q"}` under a task header."""
    if name == "files":
        task["files"] = [path for path in re.split(r"\s*,\s*", value) if path]
        return
    tool, _, arguments = value.partition(" ")
    if nested_deeper_than(arguments):
        raise PlanError(f"line {number}: the arguments of the action are nested more than {MAX_DEPTH} levels deep")
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as err:
        raise PlanError(f"line {number}: the arguments of the action are not valid JSON ({err.msg})") from None
    task["action"] = {"tool": tool, "args": args}


def _close(tasks: list[dict[str, object]], description: list[str]) -> None:
    """Gives the last task read the description lines collected since its header."""
    if tasks:
        tasks[-1]["description"] = "\n".join(description).strip()
    description.clear()


def _escape(line: str) -> str:
    """A description line that would read as a comment or a field gets a `\\` in front (removed when read)."""
    return "\\" + line if line.startswith(("#", "\\")) or FIELD.match(line) else line


class EditorError(PaicliError):
    """The editor could not be started."""


def editor_command(environ: Mapping[str, str] | None = None) -> list[str]:
    """$EDITOR, else $VISUAL, else vi; either may carry arguments (`code --wait`)."""
    env = os.environ if environ is None else environ
    for name in ("EDITOR", "VISUAL"):
        value = env.get(name, "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


async def edit_in_editor(text: str) -> str | None:
    """Opens `text` in the user's editor (it gets the terminal); the saved text, or None if it failed."""
    command = editor_command()
    handle, name = tempfile.mkstemp(prefix="paicli-plan-", suffix=".md", text=True)
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            from paicli.ui.prompt.keys import enter_ends_lines

            with enter_ends_lines():  # the REPL keeps Enter a CR (ui/prompt/keys.py); an editor may read lines
                finished = await asyncio.to_thread(subprocess.run, [*command, str(path)], check=False)
        except OSError as err:
            raise EditorError(f"could not start the editor {shlex.join(command)!r}: {err}") from err
        if finished.returncode != 0:
            return None
        return path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)
