"""Durable plans: every plan is saved under `.paicli/plans/` as JSON after each state change (atomic
write, so a crash leaves the previous or the new file, never a torn one) plus a readable Markdown file.

A saved plan can be resumed: COMPLETED tasks keep their results, every other task of the latest round
runs again. Tasks of earlier rounds that failed stay as history (the replan superseded them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from paicli.errors import ConfigError, PlanError
from paicli.events import FileChange
from paicli.llm.types import Usage
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.parse import parse_plan_reply
from paicli.tools.atomic import atomic_write

MAX_FILE_TASKS = 10_000  # a plan written by hand may be larger than one a model may propose
RESUMABLE = (PlanStatus.CANCELLED, PlanStatus.FAILED, PlanStatus.RUNNING, PlanStatus.CREATED)
STATUS_ICON = {"PENDING": "○", "RUNNING": "●", "COMPLETED": "✓", "FAILED": "✗", "SKIPPED": "↷"}


class PlanRecord(BaseModel):
    id: str
    created_at: float
    updated_at: float
    plan: Plan
    usage: Usage = Usage()
    failure: str | None = None
    changes: list[FileChange] | None = None  # the files it changed (None: checkpoints were off)


class PlanStore:
    def __init__(self, workspace: Path) -> None:
        self.folder = workspace / ".paicli" / "plans"

    def new_id(self, goal: str) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", goal.lower()).strip("-")[:32].strip("-") or "plan"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        candidate, n = f"{stamp}-{slug}", 2
        while (self.folder / f"{candidate}.json").exists():
            candidate, n = f"{stamp}-{slug}-{n}", n + 1
        return candidate

    def write(self, plan_id: str, record_json: str, markdown: str) -> None:
        atomic_write(self.folder / f"{plan_id}.json", record_json)
        atomic_write(self.folder / f"{plan_id}.md", markdown)

    def load(self, plan_id: str) -> PlanRecord:
        path = self.folder / f"{plan_id}.json"
        if not re.fullmatch(r"[\w.-]+", plan_id) or not path.is_file():
            known = ", ".join(r.id for r in self.list()[:5]) or "none saved yet"
            raise ConfigError(f"no saved plan {plan_id!r} in {self.folder} (latest: {known})")
        try:
            return PlanRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as err:
            raise ConfigError(f"cannot read saved plan {path}: {str(err).splitlines()[0]}") from None

    def list(self) -> list[PlanRecord]:
        """Saved plans, newest first; unreadable files are passed over."""
        records = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
            try:
                records.append(PlanRecord.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValidationError):
                continue
        return sorted(records, key=lambda r: r.updated_at, reverse=True)

    def latest_resumable(self) -> PlanRecord | None:
        return next((r for r in self.list() if r.plan.status in RESUMABLE), None)


def prepare_resume(plan: Plan) -> Plan:
    """Resets what must run again; raises ConfigError when the plan is already COMPLETED."""
    if plan.status is PlanStatus.COMPLETED:
        raise ConfigError("that plan is already COMPLETED; nothing to resume")
    for task in plan.current():
        if task.status is not TaskStatus.COMPLETED:
            task.status = TaskStatus.PENDING
            task.result = task.error = None
            task.started_at = task.finished_at = None
    plan.status = PlanStatus.CREATED
    return plan


def plan_from_file(path: Path) -> Plan:
    """A hand-written plan file in the contract's JSON shape (with an optional "goal"), validated."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    goal = f"run the plan in {path.name}"
    with contextlib.suppress(ValueError):
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("goal"), str) and data["goal"].strip():
            goal = data["goal"].strip()
    try:
        return parse_plan_reply(text, finish_reason="stop", goal=goal, max_tasks=MAX_FILE_TASKS)
    except PlanError as err:
        raise ConfigError(f"{path}: {err}") from None


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


class PlanRecorder:
    """The plan listener that saves a plan on every change. The id is chosen at the first save unless
    given (a resumed plan keeps its id).

    Inside an event loop, saving never holds up a task: the file writes (fsync included) run in a worker
    thread, one after another, and the plan is rendered to JSON again only when the previous write is
    done, so all the changes made meanwhile go to disk together in the next one. `flush()` waits until
    the latest state is on disk.
    """

    def __init__(
        self,
        store: PlanStore,
        *,
        plan_id: str | None = None,
        usage: Callable[[], Usage] = Usage,
        failure: Callable[[], str | None] = lambda: None,
        changes: Callable[[], list[FileChange] | None] = lambda: None,
    ) -> None:
        self.store = store
        self.plan_id = plan_id
        self.usage = usage
        self.failure = failure
        self.changes = changes
        self.created_at = time.time()
        self._plan: Plan | None = None
        self._dirty = False
        self._writer: asyncio.Task[None] | None = None

    def __call__(self, plan: Plan) -> None:
        self._plan = plan
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.store.write(*self._render(plan))
            return
        self._dirty = True
        if self._writer is None or self._writer.done():
            self._writer = loop.create_task(self._write_while_dirty())

    async def flush(self) -> None:
        if self._dirty and (self._writer is None or self._writer.done()):
            self._writer = asyncio.get_running_loop().create_task(self._write_while_dirty())
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    def _render(self, plan: Plan) -> tuple[str, str, str]:
        if self.plan_id is None:
            self.plan_id = self.store.new_id(plan.goal)
        record = PlanRecord(
            id=self.plan_id, created_at=self.created_at, updated_at=time.time(), plan=plan,
            usage=self.usage(), failure=self.failure(), changes=self.changes(),
        )
        return self.plan_id, record.model_dump_json(indent=2), render_markdown(record)

    async def _write_while_dirty(self) -> None:
        await asyncio.sleep(0)  # let the tasks the scheduler just started send their requests first
        while self._dirty and self._plan is not None:
            self._dirty = False
            await asyncio.to_thread(self.store.write, *self._render(self._plan))
