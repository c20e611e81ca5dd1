"""Runs one plan task in its own ReAct loop. Its context is the goal, the task, and the results of its
direct dependencies, nothing else. The system prompt and tool list are the same bytes for every task."""

from __future__ import annotations

from collections.abc import Callable

from paicli.agent.react import ReactLoop
from paicli.llm.types import Message
from paicli.plan.model import Plan, Task

RESULT_CAP = 8_000  # characters of one dependency's result passed on to a dependent

LoopFactory = Callable[[Task], ReactLoop]


def task_messages(system_prompt: str, plan: Plan, task: Task) -> list[Message]:
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": task_brief(plan, task)},
    ]


def task_brief(plan: Plan, task: Task) -> str:
    lines = [
        "# Goal",
        plan.goal.strip(),
        "",
        "# Your task",
        f"id: {task.id}",
        f"type: {task.type.value}",
        f"description: {task.description.strip()}",
        "",
        "# Results of the tasks yours depends on",
    ]
    if not task.dependencies:
        lines.append("none")
    for dep_id in task.dependencies:
        dep = plan.task(dep_id)
        result = (dep.result or "").strip() or "(no result text)"
        if len(result) > RESULT_CAP:
            result = result[:RESULT_CAP] + f"\n[... {len(result) - RESULT_CAP} more characters cut]"
        origin = ", from the saved plan it was resumed from" if dep.from_saved else ""
        lines += [
            "",
            f"## {dep.id} ({dep.type.value}, {dep.status.value}{origin})",
            f"description: {dep.description.strip()}",
            "result:",
            result,
        ]
    return "\n".join(lines) + "\n"


class ReactTaskRunner:
    """The scheduler's TaskRunner: builds the task's messages and runs a fresh loop for it."""

    def __init__(self, system_prompt: str, make_loop: LoopFactory) -> None:
        self.system_prompt = system_prompt
        self.make_loop = make_loop

    async def __call__(self, plan: Plan, task: Task) -> str:
        loop = self.make_loop(task)
        try:
            result = await loop.run(task_messages(self.system_prompt, plan, task))
        finally:  # a failed or cancelled task's requests count too
            task.usage = task.usage + loop.spent
        return result.content or result.digest() or "(the task finished without output)"
