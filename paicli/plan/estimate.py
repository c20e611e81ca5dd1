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
"""

from __future__ import annotations

from dataclasses import dataclass

from paicli.llm.types import Estimate
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

    def task(self, plan: Plan, task: Task) -> Estimate:
        if task.action is not None:
            return Estimate()
        brief = (len(plan.goal) + len(task.description)) // 4 + 100 + DEPENDENCY_TOKENS * len(task.dependencies)
        steps = REQUESTS[task.type]
        first = self.fixed_tokens + brief
        return Estimate(requests=steps, prompt_tokens=steps * first + STEP_TOKENS * steps * (steps - 1) // 2)

    def __call__(self, plan: Plan) -> Estimate:
        """The cost of running the plan's PENDING tasks, then the summary (and a review)."""
        pending = [task for task in plan.tasks if task.status is TaskStatus.PENDING]
        total = sum((self.task(plan, task) for task in pending), Estimate())
        closings = 2 if self.review else 1
        closing = self.closing_fixed_tokens + CLOSING_TOKENS * max(1, len(plan.tasks))
        return total + Estimate(requests=closings, prompt_tokens=closings * closing)
