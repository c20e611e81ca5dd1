"""Helpers to script whole plans on the fake server: planner replies and per-task replies."""

from __future__ import annotations

import json
from typing import Any

from tests.fakellm import Body, FakeLLM, Reply, message_text

PLANNER = "# Mode: planning"
REPLANNER = "# Mode: replanning"
SUMMARIZER = "# Mode: writing the final answer"
REVIEWER = "# Mode: reviewing"


def plan_json(tasks: dict[str, list[str]], summary: str = "the plan", types: dict[str, str] | None = None) -> str:
    types = types or {}
    return json.dumps(
        {
            "summary": summary,
            "tasks": [
                {"id": tid, "description": f"do {tid}", "type": types.get(tid, "ANALYSIS"), "dependencies": deps}
                for tid, deps in tasks.items()
            ],
        }
    )


def system_is(marker: str) -> Any:
    def predicate(body: Body) -> bool:
        messages = body.get("messages") or []
        return bool(messages) and message_text(messages[0]).startswith(marker)

    return predicate


def task_is(task_id: str) -> Any:
    """Matches the requests of one plan task (its brief names it as `id: <task_id>`)."""
    marker = f"id: {task_id}\ntype:"

    def predicate(body: Body) -> bool:
        messages = body.get("messages") or []
        return len(messages) > 1 and marker in message_text(messages[1])

    return predicate


def brief(body: Body | None) -> str:
    """The user message of a task request."""
    return message_text((body or {}).get("messages", [{}, {}])[1])


def script_summary(fake: FakeLLM, text: str = "All done.") -> None:
    fake.on(system_is(SUMMARIZER), Reply.text(text), repeat=True)


def requests_of(fake: FakeLLM, task_id: str) -> list[Any]:
    return [r for r in fake.requests if r.body is not None and task_is(task_id)(r.body)]
