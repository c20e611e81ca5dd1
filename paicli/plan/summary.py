"""The final answer of a plan, written from the goal and the task results by one tool-free request."""

from __future__ import annotations

from paicli.llm.types import ChatModel, Message
from paicli.plan import caps
from paicli.plan.model import SAVED_MARK, Plan


def outcome_brief(plan: Plan) -> str:
    lines = ["# Goal", plan.goal.strip(), "", "# Tasks and their results"]
    for task in plan.tasks:
        saved = f" ({SAVED_MARK})" if task.from_saved else ""
        lines += ["", f"## {task.id} [{task.type.value}] {task.status.value}{saved}: {task.description.strip()}"]
        if task.result:
            lines.append(task.shown_result(caps.CLOSING_RESULT))
        else:
            lines.append(task.error_for_model(caps.CLOSING_RESULT) if task.error else "(no result)")
    return "\n".join(lines) + "\n"


class Summarizer:
    """Writes the final answer from the goal and the task results (tool-free, one request)."""

    def __init__(self, llm: ChatModel, *, system_prompt: str) -> None:
        self.llm = llm
        self.system_prompt = system_prompt

    async def __call__(self, plan: Plan) -> str:
        messages: list[Message] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": outcome_brief(plan)},
        ]
        response = await self.llm.chat(messages)
        return response.content.strip() or plan.summary
