"""What a plan will cost before it runs: model requests and prompt tokens (and a price, when known).

A rough, documented model, good enough to compare plans and to notice an expensive one before approving
it (the benchmark `tokens` reports how far off it is):
- a direct action (`action`) costs nothing: no model request;
- a task run by the model costs `REQUESTS[type]` requests (a tool round or two, then the answer); each
  request sends the fixed part (system prompt and tool schemas, measured by the caller) plus the task's
  brief (goal, description, `DEPENDENCY_TOKENS` per dependency), and every request after the first also
  what the previous steps added (`STEP_TOKENS` each);
- the summary is one request, and the review one more when reviews are on.
Token counts use the same four-characters-a-token rule as context compression.

Each request is counted for the model it will name (`route`, from paicli/plan/routing.py), and the
estimate is priced when prices are known for every one of those models. Only prompt tokens are estimated:
completion tokens are not (they depend on what the model writes), so the price is that of the prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from paicli.llm.price import Price
from paicli.llm.types import Estimate, ModelEstimate
from paicli.plan.model import Plan, Task, TaskStatus, TaskType

REQUESTS = {
    TaskType.FILE_READ: 2,
    TaskType.FILE_WRITE: 3,
    TaskType.COMMAND: 2,
    TaskType.ANALYSIS: 1,
    TaskType.VERIFICATION: 2,
}
DEPENDENCY_TOKENS = 600  # a dependency's result as a dependent's brief carries it
STEP_TOKENS = 700  # what one tool round adds to the conversation (the call, its capped output)
CLOSING_TOKENS = 1_500  # the summarizer's (or reviewer's) request beyond its fixed prompt, per task


@dataclass(frozen=True)
class Estimator:
    fixed_tokens: int  # system prompt and tool schemas of one task request
    closing_fixed_tokens: int = 1_000  # the summarizer's system prompt
    review: bool = False
    route: Callable[[TaskType], str] | None = None  # the model of a task type; None: models not known
    summarizer_model: str | None = None
    reviewer_model: str | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)

    def model_of(self, task: Task) -> str | None:
        """The model the task's requests will name; None for a direct action (or when not known)."""
        if task.action is not None or self.route is None:
            return None
        return self.route(task.type)

    def task(self, plan: Plan, task: Task) -> Estimate:
        if task.action is not None:
            return Estimate()
        brief = (len(plan.goal) + len(task.description)) // 4 + 100 + DEPENDENCY_TOKENS * len(task.dependencies)
        steps = REQUESTS[task.type]
        first = self.fixed_tokens + brief
        tokens = steps * first + STEP_TOKENS * steps * (steps - 1) // 2
        model = self.model_of(task)
        if model is None:
            return Estimate(requests=steps, prompt_tokens=tokens)
        return _of(model, steps, tokens).model_copy(update={"task_models": {task.id: model}})

    def __call__(self, plan: Plan) -> Estimate:
        """The cost of running the plan's PENDING tasks, then the summary (and a review), priced when
        every model it uses has a price."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        total = sum((self.task(plan, task) for task in pending), Estimate())
        closing = self.closing_fixed_tokens + CLOSING_TOKENS * max(1, len(plan.tasks))
        total += _of(self.summarizer_model, 1, closing)
        if self.review:
            total += _of(self.reviewer_model, 1, closing)
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


def _of(model: str | None, requests: int, prompt_tokens: int) -> Estimate:
    """`requests` requests of `prompt_tokens` in all, counted for `model` when it is known."""
    estimate = Estimate(requests=requests, prompt_tokens=prompt_tokens)
    if model is None:
        return estimate
    return estimate.model_copy(
        update={"by_model": {model: ModelEstimate(requests=requests, prompt_tokens=prompt_tokens)}}
    )


__all__ = ["Estimator", "Price"]
