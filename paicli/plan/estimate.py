"""What a plan will cost before it runs: model requests and prompt tokens (and a price, when known).

A rough, documented model, good enough to compare plans and to notice an expensive one before approving
it (the benchmark `tokens` reports how far off it is; the constants below come from its measurements):
- a direct action (`action`) costs nothing: no model request;
- a task run by the model costs `REQUESTS[type]` requests (a tool round or two, then the answer); a
  FILE_WRITE task that only creates files costs one less (it need not read them first). Each request
  sends the fixed part (system prompt and tool schemas, measured by the caller) plus the task's brief
  (goal, description, and per dependency its result: `DEPENDENCY_TOKENS` for a model's answer, the raw
  output, capped as the brief caps it, for a direct action; a file read directly is sized from the file),
  and every request after the first also what the previous steps added (`STEP_TOKENS[type]` each: a
  read adds a file, other rounds a call and a short output);
- the summary is one request, and the review one more when reviews are on, each carrying every task's
  result as they show it (`CLOSING_TOKENS` per task).
Token counts use the same four-characters-a-token rule as context compression. The planning requests
are not part of it: they are made before the estimate.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from paicli.llm.types import Estimate
from paicli.plan.executor import RESULT_CAP
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.tools.base import ToolFailure
from paicli.tools.guard import resolve_in_workspace

REQUESTS = {
    TaskType.FILE_READ: 2,
    TaskType.FILE_WRITE: 3,  # read, change, answer; 2 when it only creates files
    TaskType.COMMAND: 2,
    TaskType.ANALYSIS: 1,
    TaskType.VERIFICATION: 2,
}
DEPENDENCY_TOKENS = 300  # a model's answer as a dependent's brief carries it
RAW_TOKENS = RESULT_CAP // 4 + 60  # a direct action's raw output there (cut at RESULT_CAP characters)
RAW_CHARS_PER_BYTE = 1.25  # a file read directly, as read_file shows it (line numbers) in a request's JSON
STEP_TOKENS = {  # what one tool round adds to the conversation: the call and its (capped) output
    TaskType.FILE_READ: 2_500,  # a file of about 10 KB
    TaskType.FILE_WRITE: 300,
    TaskType.COMMAND: 300,
    TaskType.ANALYSIS: 300,
    TaskType.VERIFICATION: 300,
}
CLOSING_TOKENS = 200  # the summarizer's (or reviewer's) request beyond its fixed prompt, per task


@dataclass(frozen=True)
class Price:
    """Per million tokens, in the user's currency."""

    input: float
    output: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int = 0) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class Estimator:
    fixed_tokens: int  # system prompt and tool schemas of one task request
    closing_fixed_tokens: int = 1_000  # the summarizer's system prompt
    review: bool = False
    workspace: Path | None = None  # where files are sized and looked up; None: the constants only

    def task(self, plan: Plan, task: Task) -> Estimate:
        if task.action is not None:
            return Estimate()
        dependencies = sum(self._dependency(plan.task(dep)) for dep in task.dependencies if dep in plan.ids())
        brief = (len(plan.goal) + len(task.description)) // 4 + 100 + dependencies
        steps = REQUESTS[task.type] - (1 if task.type is TaskType.FILE_WRITE and self._creates_only(task) else 0)
        first = self.fixed_tokens + brief
        return Estimate(requests=steps, prompt_tokens=steps * first + STEP_TOKENS[task.type] * steps * (steps - 1) // 2)

    def __call__(self, plan: Plan) -> Estimate:
        """The cost of running the plan's PENDING tasks, then the summary (and a review)."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        total = sum((self.task(plan, task) for task in pending), Estimate())
        closings = 2 if self.review else 1
        closing = self.closing_fixed_tokens + CLOSING_TOKENS * max(1, len(plan.tasks))
        return total + Estimate(requests=closings, prompt_tokens=closings * closing)

    def _dependency(self, dep: Task) -> int:
        """What a dependency's result adds to a dependent's brief."""
        if dep.action is None:
            return DEPENDENCY_TOKENS
        path = dep.action.args.get("path") if dep.action.tool == "read_file" else None
        size = self._size(path) if isinstance(path, str) else None
        return RAW_TOKENS if size is None else min(int(size * RAW_CHARS_PER_BYTE), RESULT_CAP) // 4 + 60

    def _creates_only(self, task: Task) -> bool:
        """Whether every declared file is new (a folder never counts as new: it may hold files to change)."""
        files = task.files or []
        return (
            self.workspace is not None
            and bool(files)
            and all(not path.endswith("/") and self._size(path) is None for path in files)
        )

    def _size(self, path: str) -> int | None:
        """The size of a regular file in the workspace, None when it is not one (or cannot be known)."""
        if self.workspace is None:
            return None
        try:
            found = os.stat(resolve_in_workspace(self.workspace, path, for_write=False))
        except (ToolFailure, OSError, ValueError):
            return None
        return found.st_size if stat.S_ISREG(found.st_mode) else None
