"""The estimate calibrated from what this server and model actually used (issue 32).

The estimator's rule (paicli/plan/estimate.py) knows the prompts and the plan but not the model: how many
tool rounds a task takes, how much each adds. What a finished task cost is kept against what the rule said,
per endpoint, model and task type, with the capabilities (paicli/llm/capability_store.py), and the next
estimate is scaled by it:

- tasks are told apart by type, and by whether a dependency hands them a direct action's raw output (a
  file read directly: `kind_of`), since a task given the files costs what it is given, not what it reads;
- the factor of a kind is what its latest samples used ÷ what the rule said for them, summed (a big
  task weighs more than a small one), for requests and prompt tokens apart;
- the range is how far single tasks strayed: the smallest and largest ratio of the samples once there are
  `MIN_SAMPLES`; with fewer, the factor widened by `FEW_SAMPLES`; with none, `UNCALIBRATED` around the rule
  (the two plans of issue 32 used 0.29 and 0.35 of the rule's figure; in `python -m bench tokens` an
  analysis that reads its two files itself used 2.6 times it);
- the summary and review requests are not calibrated: their prompt is the task results, which the rule
  sizes from the plan (`CLOSING`).

Only tasks that COMPLETED in a run count (a failed task stopped early, a saved one did not run), each
model-run task once, for the model it ran on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paicli.llm.capability_store import Sample
from paicli.plan.model import Plan, Task, TaskStatus

MIN_SAMPLES = 3
UNCALIBRATED = (0.3, 3.0)  # the range around the rule's figure for a kind of task never seen on this endpoint
FEW_SAMPLES = (0.6, 1.6)  # the range around the factor of a type with fewer than MIN_SAMPLES samples
CLOSING = (0.7, 1.5)  # the range of a summary or review request


@dataclass(frozen=True)
class Factor:
    """How the rule's figures for one task type are scaled, and how far off a single task may be."""

    requests: float = 1.0
    tokens: float = 1.0
    low: float = UNCALIBRATED[0]  # of the rule's prompt tokens
    high: float = UNCALIBRATED[1]
    samples: int = 0  # what it rests on; 0: not calibrated


def factor_of(samples: list[Sample]) -> Factor:
    """The factor of a task type from its samples (estimated requests, used, estimated tokens, used)."""
    usable = [s for s in samples if s[0] > 0 and s[2] > 0]
    if not usable:
        return Factor()
    requests = sum(s[1] for s in usable) / sum(s[0] for s in usable)
    tokens = sum(s[3] for s in usable) / sum(s[2] for s in usable)
    if len(usable) < MIN_SAMPLES:
        low, high = tokens * FEW_SAMPLES[0], tokens * FEW_SAMPLES[1]
    else:
        ratios = [s[3] / s[2] for s in usable]
        low, high = min(ratios), max(ratios)
    return Factor(requests, tokens, min(low, tokens), max(high, tokens), len(usable))


@dataclass(frozen=True)
class Prediction:
    """What the rule said of one task when its round was approved (before any calibration)."""

    model: str | None
    kind: str  # the task's kind (`kind_of`)
    requests: int
    prompt_tokens: int


def kind_of(plan: Plan, task: Task) -> str:
    """`ANALYSIS`, or `ANALYSIS/raw` when a dependency is a direct action, whose raw output the task is given."""
    raw = any(dep in plan.ids() and plan.task(dep).action is not None for dep in task.dependencies)
    return f"{task.type.value}/raw" if raw else task.type.value


Calibrate = Callable[[Mapping[str, list[Sample]], str | None], None]  # samples per type, for a model


def learn(plan: Plan, predictions: Mapping[str, Prediction], calibrate: Calibrate) -> None:
    """Keeps what each task that completed in this run cost against its prediction, per model."""
    by_model: dict[str | None, dict[str, list[Sample]]] = {}
    for task in plan.tasks:
        predicted = predictions.get(task.id)
        if predicted is None or task.status is not TaskStatus.COMPLETED or task.from_saved or not task.requests:
            continue
        sample = (predicted.requests, task.requests, predicted.prompt_tokens, task.usage.prompt_tokens)
        by_model.setdefault(predicted.model, {}).setdefault(predicted.kind, []).append(sample)
    for model, samples in by_model.items():
        calibrate(samples, model)
