"""What a plan will cost before it runs: model requests and prompt tokens (and a price, when known).

A rough, documented model, good enough to compare plans and to notice an expensive one before approving
it (the benchmark `tokens` reports how far off it is; the constants below come from its measurements):
- a direct action (`action`) costs nothing: no model request;
- a task run by the model costs `REQUESTS[type]` requests (a tool round or two, then the answer); a
  FILE_WRITE task that only creates files costs one: it writes them whole, and that ends it
  (paicli/plan/executor.py `files_written`). Each request
  sends the fixed part (system prompt and tool schemas, measured by the caller) plus the task's brief
  (goal, description, and per dependency its result: `DEPENDENCY_TOKENS` for a model's answer, the raw
  output, capped as the brief caps it, for a direct action; a file read directly is sized from the file),
  and every request after the first also what the previous steps added (`STEP_TOKENS[type]` each: a
  read adds a file, other rounds a call and a short output);
- the summary is one request, and the review one more when reviews are on, each carrying every task's
  result as they show it (`CLOSING_TOKENS` per task).
Token counts use the same four-characters-a-token rule as context compression. The planning requests
are not part of it: they are made before the estimate.

The rule's figures for a task are then scaled by what tasks of its type actually cost on this server and
model (`factor`, paicli/plan/calibration.py), which also gives the range the tokens are expected in.

Each request is counted for the model it will name (`route`, from paicli/plan/routing.py), and the
estimate is priced when prices are known for every one of those models. Only prompt tokens are estimated:
completion tokens are not (they depend on what the model writes), so the price is that of the prompts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paicli.common.values import Estimate, ModelEstimate
from paicli.llm.price import Price
from paicli.plan import caps
from paicli.plan.calibration import CLOSING, Factor, Prediction, kind_of
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.tools.base import ToolFailure
from paicli.tools.guard import resolve_in_workspace

REQUESTS = {
    TaskType.FILE_READ: 2,
    TaskType.FILE_WRITE: 3,  # read, change, answer; 1 when it only creates files
    TaskType.COMMAND: 2,
    TaskType.ANALYSIS: 1,
    TaskType.VERIFICATION: 2,
}
DEPENDENCY_TOKENS = 300  # a model's answer as a dependent's brief carries it
RAW_TOKENS = caps.DEPENDENCY_RAW_RESULT // 4 + 60  # a direct action's raw output there (cut at the cap)
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
class Estimator:
    fixed_tokens: int  # system prompt and tool schemas of one task request
    closing_fixed_tokens: int = 1_000  # the summarizer's system prompt
    review: bool = False
    workspace: Path | None = None  # where files are sized and looked up; None: the constants only
    route: Callable[[TaskType], str] | None = None  # the model of a task type; None: models not known
    summarizer_model: str | None = None
    reviewer_model: str | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    # How the figures of a kind of task (calibration.kind_of) are scaled on this server and a model (None: not
    # calibrated, the rule's range)
    factor: Callable[[str | None, str], Factor] | None = None

    def model_of(self, task: Task) -> str | None:
        """The model the task's requests will name; None for a direct action (or when not known)."""
        if task.action is not None or self.route is None:
            return None
        return self.route(task.type)

    def rule(self, plan: Plan, task: Task) -> tuple[int, int]:
        """The requests and prompt tokens of a model-run task by the rule alone (before any calibration)."""
        dependencies = sum(self._dependency(plan.task(dep)) for dep in task.dependencies if dep in plan.ids())
        brief = (len(plan.goal) + len(task.description)) // 4 + 100 + dependencies
        creates_only = task.type is TaskType.FILE_WRITE and self._creates_only(task)
        steps = 1 if creates_only else REQUESTS[task.type]
        first = self.fixed_tokens + brief
        return steps, steps * first + STEP_TOKENS[task.type] * steps * (steps - 1) // 2

    def predict(self, plan: Plan) -> dict[str, Prediction]:
        """The rule's figures for each PENDING model-run task: what its run is measured against afterwards."""
        predictions = {}
        for task in plan.tasks:
            if task.status is TaskStatus.PENDING and task.action is None:
                requests, tokens = self.rule(plan, task)
                predictions[task.id] = Prediction(self.model_of(task), kind_of(plan, task), requests, tokens)
        return predictions

    def task(self, plan: Plan, task: Task) -> Estimate:
        if task.action is not None:
            return Estimate()
        steps, tokens = self.rule(plan, task)
        model = self.model_of(task)
        factor = self.factor(model, kind_of(plan, task)) if self.factor is not None else Factor()
        requests, central = max(1, round(steps * factor.requests)), round(tokens * factor.tokens)
        sure = {
            "prompt_tokens_low": int(tokens * factor.low),
            "prompt_tokens_high": int(tokens * factor.high + 0.999),
            "uncalibrated": 0 if factor.samples else 1,
        }
        if model is None:
            return Estimate(requests=requests, prompt_tokens=central).model_copy(update=sure)
        return _of(model, requests, central).model_copy(update={"task_models": {task.id: model}, **sure})

    def __call__(self, plan: Plan) -> Estimate:
        """The cost of running the plan's PENDING tasks, then the summary (and a review), priced when
        every model it uses has a price."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        total = sum((self.task(plan, task) for task in pending), Estimate())
        closing = self.closing_fixed_tokens + CLOSING_TOKENS * max(1, len(plan.tasks))
        sure = {"prompt_tokens_low": int(closing * CLOSING[0]), "prompt_tokens_high": int(closing * CLOSING[1])}
        total += _of(self.summarizer_model, 1, closing).model_copy(update=sure)
        if self.review:
            total += _of(self.reviewer_model, 1, closing).model_copy(update=sure)
        return total.model_copy(update={"cost": self.cost(total)})

    def cost(self, estimate: Estimate) -> float | None:
        """The price of the estimate's prompt tokens; None unless every request has a priced model."""
        counted = sum(part.requests for part in estimate.by_model.values())
        if (
            not self.prices
            or counted != estimate.requests
            or any(name not in self.prices for name in estimate.by_model)
        ):
            return None
        return sum(self.prices[name].cost(part.prompt_tokens) for name, part in estimate.by_model.items())

    def _dependency(self, dep: Task) -> int:
        """What a dependency's result adds to a dependent's brief."""
        if dep.action is None:
            return DEPENDENCY_TOKENS
        path = dep.action.args.get("path") if dep.action.tool == "read_file" else None
        size = self._size(path) if isinstance(path, str) else None
        return RAW_TOKENS if size is None else min(int(size * RAW_CHARS_PER_BYTE), caps.DEPENDENCY_RAW_RESULT) // 4 + 60

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


def _of(model: str | None, requests: int, prompt_tokens: int) -> Estimate:
    """`requests` requests of `prompt_tokens` in all, counted for `model` when it is known."""
    estimate = Estimate(requests=requests, prompt_tokens=prompt_tokens)
    if model is None:
        return estimate
    return estimate.model_copy(
        update={"by_model": {model: ModelEstimate(requests=requests, prompt_tokens=prompt_tokens)}}
    )


__all__ = ["Estimator", "Price"]
