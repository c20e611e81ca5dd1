"""Runs one plan task in its own ReAct loop. Its context is the goal, the task, and the results of its
direct dependencies, nothing else. The system prompt and tool list are the same bytes for every task."""

from __future__ import annotations

import json
from collections.abc import Callable

from paicli.agent.react import FinishWhen, ReactLoop
from paicli.common import paths
from paicli.common.errors import AgentError
from paicli.llm.types import Message, ToolCall
from paicli.plan import caps
from paicli.plan.model import SAVED_MARK, Plan, Task, TaskAction, TaskType
from paicli.tools.arguments import arguments_or_raw
from paicli.tools.base import ToolOutcome
from paicli.tools.output import truncate_middle

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
    ]
    if task.files is not None:
        lines.append(f"files you may change (nothing else): {', '.join(task.files) or 'none'}")
    lines += ["", "# Results of the tasks yours depends on"]
    if not task.dependencies:
        lines.append("none")
    for dep_id in task.dependencies:
        dep = plan.task(dep_id)
        result = dep.result_for_model(caps.DEPENDENCY_RAW_RESULT if dep.raw_result else caps.DEPENDENCY_RESULT)
        origin = f", {SAVED_MARK}" if dep.from_saved else ""
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
        if task.action is not None:
            return await run_action(loop, task, task.action)
        loop.finish_when = files_written(task)
        try:
            result = await loop.run(task_messages(self.system_prompt, plan, task))
        finally:  # a failed or cancelled task's requests count too
            task.usage = task.usage + loop.spent
            task.waited += loop.waited
            task.requests = loop.requests
        return result.content  # never empty: the loop re-asks, fails or digests the tool results


async def run_action(loop: ReactLoop, task: Task, action: TaskAction) -> str:
    """A task that is one exact tool call: run through the same gate, caps and events as a model's call,
    with no model request. The tool's output is the result (marked raw, and as data where a model reads it);
    a refusal, an error or a command's non-zero exit fails the task, with the output, so the replanner sees
    what happened."""
    call = ToolCall(id=f"action_{task.id}", name=action.tool, arguments=json.dumps(action.args, ensure_ascii=False))
    try:
        outcome = await loop.call_tool(call)
    finally:
        task.waited += loop.waited
    task.data_marker = outcome.marker  # the output stays as the tool wrote it; a model reading it sees the marker
    tool = loop.tools.tool(action.tool)
    why = None if outcome.ok else ("it was refused" if outcome.output.startswith("Error: refused") else "it failed")
    why = why or (tool.failure(outcome.output) if tool is not None else None)
    if why is not None:
        output = truncate_middle(outcome.output, caps.ACTION_ERROR)
        raise AgentError(f"the action {action.tool} failed ({why}):\n{output}")
    task.raw_result = True
    return outcome.output


def files_written(task: Task) -> FinishWhen | None:
    """For a FILE_WRITE task that declares exact files: the run ends once each of them was written whole
    (`write_file`) and every call of the latest reply was such a write that succeeded. The model's closing
    "I wrote the file" would only repeat the tool results, and costs a reply on the plan's critical path
    (bench/README.md section 6). The executor prompt tells the model, so it writes each file's final text
    in one call. A task with a folder in `files`, or whose last reply did anything else, ends as usual."""
    declared = set(task.files or ())
    if task.type is not TaskType.FILE_WRITE or not declared or any(path.endswith("/") for path in declared):
        return None
    written: set[str] = set()

    def finish(calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        only_writes = True
        for call, outcome in zip(calls, outcomes, strict=True):
            arguments = arguments_or_raw(call.arguments)
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if call.name == "write_file" and outcome.ok and isinstance(path, str) and (normal := paths.normalise(path)):
                written.add(normal)
            else:
                only_writes = False
        if not only_writes or not declared <= written:
            return None
        return "\n".join(outcome.output.strip() for outcome in outcomes)

    return finish
