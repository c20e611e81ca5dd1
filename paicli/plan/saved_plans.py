"""Durable plans: every plan is saved under `.paicli/plans/` as JSON after each state change (atomic
write, so a crash leaves the previous or the new file, never a torn one) plus a readable Markdown file.

A saved plan can be resumed (`paicli.plan.resume`): COMPLETED tasks keep their results, every other task
of the latest round runs again. Tasks of earlier rounds that failed stay as history (the replan
superseded them).

Whatever is in the folder is untrusted (a cloned repository may ship it): a plan's id is its file's name
(checked: a plain name, never a path), never the `id` written inside; the folder and the files are
reached without following symlinks, only regular files of at most `MAX_PLAN_BYTES` are read, and
"newest" means the file's own modification time. See `paicli.tools.confined`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ValidationError

from paicli.common.atomic_write import write_in_folder
from paicli.common.errors import ConfigError, PlanError
from paicli.common.events import FileChange
from paicli.common.sanitize import well_formed, well_formed_json
from paicli.common.values import Usage
from paicli.plan.model import Plan, PlanStatus, Task
from paicli.plan.parse_reply import parse_plan_reply
from paicli.plan.resume import MAX_FILE_TASKS, prepare_resume
from paicli.tools.confined import UnsafeFile, create_new, entries, open_folder, read_path, read_regular

__all__ = ["PlanRecord", "PlanStore", "plan_from_file", "prepare_resume", "render_markdown"]

MAX_PLAN_BYTES = 8 << 20  # a saved plan or a --from file larger than this is refused unread
LIST_LIMIT = 20  # saved plans `list()` reads (newest first)
LIST_BYTES = 32 << 20  # and the most it reads for them together
PLAN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # no "/", no leading ".": a name in the folder
PLANS_FOLDER = (".paicli", "plans")
PLANS_GITIGNORE = (
    b"# paicli's saved plans: local state, ignored by git. To commit them, remove the line below\n"
    b"# (paicli writes this file again whenever it is missing)\n*\n"
)
RESUMABLE = (PlanStatus.CANCELLED, PlanStatus.FAILED, PlanStatus.RUNNING, PlanStatus.CREATED)
STATUS_ICON = {"PENDING": "○", "RUNNING": "●", "COMPLETED": "✓", "FAILED": "✗", "SKIPPED": "↷"}


class PlanRecord(BaseModel):
    id: str  # on load always the file's name: what the file says is ignored
    created_at: float
    updated_at: float
    plan: Plan
    usage: Usage = Usage()
    failure: str | None = None
    changes: list[FileChange] | None = None  # the files it changed (None: checkpoints were off)


def check_plan_id(plan_id: str) -> str:
    """`plan_id` when it is a plan id (a plain file name: letters, digits, `.`, `_`, `-`; at most 100,
    not starting with `.`), else ConfigError."""
    if not PLAN_ID.fullmatch(plan_id):
        shown = plan_id if len(plan_id) <= 60 else plan_id[:59] + "…"
        raise ConfigError(
            f"no saved plan {shown!r}: a plan id is a name of letters, digits, '.', '_' and '-' "
            "(at most 100, not starting with '.'), as `/plans` lists them"
        )
    return plan_id


class PlanStore:
    """The plans folder `<workspace>/.paicli/plans`, reached without following a symlink (see
    `paicli.tools.confined`): a plan's id is its file's name, checked on every read and write."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.folder = self.workspace.joinpath(*PLANS_FOLDER)

    def _open(self, *, create: bool) -> int:
        """The folder, open; with `create` (paicli is about to write a plan) made if need be, and given
        a `.gitignore` unless it has one, even when the folder was there before (a repository may ship a
        file in it): the plans stay out of the user's `git status`."""
        folder = open_folder(self.workspace, PLANS_FOLDER, create=create)
        if create:
            try:
                if create_new(folder, ".gitignore"):
                    write_in_folder(folder, ".gitignore", PLANS_GITIGNORE)
            except OSError:
                pass  # the plans themselves still work
        return folder

    def check_folder(self) -> None:
        """Creates the folder if need be; UnsafeFile when it (or `.paicli`) is a symlink or not a folder."""
        os.close(self._open(create=True))

    def new_id(self, goal: str) -> str:
        """A fresh id for `goal`, reserved: its `.json` is created empty with O_EXCL, so two processes
        planning at the same second never get the same one."""
        slug = re.sub(r"[^a-z0-9]+", "-", goal.lower()).strip("-")[:32].strip("-") or "plan"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = self._open(create=True)
        try:
            candidate, n = f"{stamp}-{slug}", 2
            while not create_new(folder, f"{candidate}.json"):
                candidate, n = f"{stamp}-{slug}-{n}", n + 1
            return candidate
        finally:
            os.close(folder)

    def write(self, plan_id: str, record_json: str, markdown: str) -> None:
        check_plan_id(plan_id)
        folder = self._open(create=True)
        try:
            write_in_folder(folder, f"{plan_id}.json", record_json.encode("utf-8"))
            write_in_folder(folder, f"{plan_id}.md", markdown.encode("utf-8"))
        finally:
            os.close(folder)

    def delete(self, plan_id: str) -> None:
        """Removes a saved plan's files (a plan cancelled before anything ran is not worth keeping)."""
        check_plan_id(plan_id)
        folder = self._open(create=False)
        try:
            for name in (f"{plan_id}.json", f"{plan_id}.md"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=folder)
        finally:
            os.close(folder)

    def resolve(self, given: str) -> str:
        """The id of the saved plan `given` names: its whole id or any unique beginning of it (as `/plans`
        shows them). ConfigError naming the candidates when the beginning fits several; `given` itself
        when it fits none (loading it then says why: no such plan, a symlinked folder, ...)."""
        ids = self.ids()
        if given in ids:
            return given
        matches = [plan_id for plan_id in ids if plan_id.startswith(given)] if given else []
        if len(matches) == 1:
            return matches[0]
        shown = given if len(given) <= 60 else given[:59] + "…"
        if matches:
            listed = ", ".join(matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
            raise ConfigError(f"{shown!r} fits several saved plans: {listed}; give more of the id")
        return check_plan_id(given)  # not a beginning of any: `load` says why it cannot be read

    def load(self, plan_id: str) -> PlanRecord:
        """The saved plan `plan_id`; ConfigError (one line) when there is none or it cannot be used."""
        check_plan_id(plan_id)
        try:
            folder = self._open(create=False)
        except FileNotFoundError:
            raise ConfigError(f"no saved plan {plan_id!r}: there is no {self.folder} yet") from None
        except UnsafeFile as error:
            raise ConfigError(f"cannot read saved plan {plan_id!r}: {error}") from None
        except OSError as error:
            raise ConfigError(f"cannot read {self.folder}: {error.strerror or error}") from None
        try:
            return self._read(folder, plan_id)
        except FileNotFoundError:
            known = ", ".join(self.ids()[:5]) or "none saved yet"
            raise ConfigError(f"no saved plan {plan_id!r} in {self.folder} (latest: {known})") from None
        finally:
            os.close(folder)

    def _read(self, folder: int, plan_id: str) -> PlanRecord:
        path = self.folder / f"{plan_id}.json"
        try:
            data = read_regular(folder, f"{plan_id}.json", limit=MAX_PLAN_BYTES, shown=path)
        except UnsafeFile as error:
            raise ConfigError(f"cannot read saved plan {plan_id!r}: {error}") from None
        except FileNotFoundError:
            raise
        except OSError as error:
            raise ConfigError(f"cannot read saved plan {path}: {error.strerror or error}") from None
        record = parse_record(data, path)
        return record.model_copy(update={"id": plan_id})

    def ids(self) -> list[str]:
        """Ids of the saved plans, newest first by their files' own modification time (never a field a
        file could lie in); symlinks, special files and names that are not ids are left out."""
        return [plan_id for plan_id, _ in self._entries()]

    def _entries(self) -> list[tuple[str, int]]:
        """(id, size) of the saved plans, newest first."""
        try:
            folder = self._open(create=False)
        except (OSError, UnsafeFile):  # none yet, a symlink, no permission: nothing to list
            return []
        try:
            found = [
                (entry.st_mtime_ns, name[: -len(".json")], entry.st_size)
                for name, entry in entries(folder, ".json")
                if PLAN_ID.fullmatch(name[: -len(".json")]) and entry.st_size > 0 and _is_regular(entry)
            ]
        finally:
            os.close(folder)
        return [(plan_id, size) for _, plan_id, size in sorted(found, reverse=True)]

    def records(self) -> Iterator[PlanRecord]:
        """Saved plans, newest first, read one at a time; unreadable ones are passed over."""
        for plan_id, _ in self._entries():
            try:
                yield self.load(plan_id)
            except ConfigError:
                continue

    def list(self, limit: int = LIST_LIMIT) -> list[PlanRecord]:
        """The newest readable saved plans, newest first: at most `limit`, and no more once the files read
        add up to `LIST_BYTES` (twenty 8 MB plans from a hostile repository are not all held at once)."""
        found: list[PlanRecord] = []
        read = 0
        for plan_id, size in self._entries():
            if len(found) >= limit or (found and read + size > LIST_BYTES):
                break
            read += size
            try:
                found.append(self.load(plan_id))
            except ConfigError:
                continue
        return found

    def latest_resumable(self) -> PlanRecord | None:
        return next((r for r in self.records() if r.plan.status in RESUMABLE), None)


def _is_regular(entry: os.stat_result) -> bool:
    return stat.S_ISREG(entry.st_mode)


def parse_record(data: bytes, path: Path) -> PlanRecord:
    """A saved plan's bytes as a PlanRecord; ConfigError naming the first problem on one line."""
    try:
        try:
            return PlanRecord.model_validate_json(data)
        except ValidationError as refused:
            if refused.errors()[0]["type"] != "json_invalid":
                raise
            # pydantic's JSON reader refuses a lone surrogate (`"\\ud800"`) that Python's takes: read it so,
            # with U+FFFD in its place, and let the first error stand when that is not it
            try:
                decoded = well_formed_json(json.loads(data))
            except (ValueError, RecursionError):
                raise refused from None
            return PlanRecord.model_validate(decoded)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"]
        if "recursion limit" in message:
            message = "the JSON is nested too deeply"
        raise ConfigError(f"cannot read saved plan {path}: {where + ': ' if where else ''}{message}") from None


def plan_from_file(path: Path) -> Plan:
    """A hand-written plan file in the contract's JSON shape (with an optional "goal"), validated like a
    model's reply (bounded size and depth). Only a regular file of at most 8 MB is read; a FIFO or a
    device is refused without blocking."""
    try:
        text = read_path(path, limit=MAX_PLAN_BYTES).decode("utf-8")
    except UnsafeFile:
        raise
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read {path}: it is not UTF-8 text") from None
    try:
        plan = parse_plan_reply(text, finish_reason="stop", goal="", max_tasks=MAX_FILE_TASKS, max_chars=MAX_PLAN_BYTES)
    except PlanError as error:
        raise ConfigError(f"{path}: {error}") from None
    plan.goal = _goal_of(text) or f"run the plan in {path.name}"
    return plan


def _goal_of(text: str) -> str | None:
    """The file's "goal", if it is strict JSON with one (the parse above has bounded its depth)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    goal = data.get("goal") if isinstance(data, dict) else None
    return well_formed(goal.strip()) if isinstance(goal, str) and goal.strip() else None


def render_markdown(record: PlanRecord) -> str:
    plan = record.plan
    lines = [
        f"# Plan {record.id}",
        "",
        f"- goal: {plan.goal}",
        f"- status: {plan.status.value} (round {plan.round})",
        f"- usage: {record.usage.prompt_tokens:,} prompt + {record.usage.completion_tokens:,} completion tokens",
    ]
    if record.failure:
        lines.append(f"- failure: {record.failure}")
    if plan.summary:
        lines += ["", plan.summary]
    lines += ["", "## Tasks", ""]
    for task in plan.tasks:
        lines += task_markdown(task)
    return "\n".join(lines) + "\n"


def task_markdown(task: Task) -> list[str]:
    after = f" — after {', '.join(task.dependencies)}" if task.dependencies else ""
    lines = [f"### {STATUS_ICON[task.status.value]} {task.id} [{task.type.value}] {task.status.value}{after}", ""]
    lines.append(task.description)
    if task.result:
        lines += ["", "Result:", "", *(f"> {line}" for line in task.result.splitlines())]
    if task.error:
        lines += ["", f"Error: {task.error}"]
    lines.append("")
    return lines
