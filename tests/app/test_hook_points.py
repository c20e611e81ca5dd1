"""Hooks in a plan (issue 35): the hooks around tool calls run in plan tasks too, told the task's id, and
the plan's own points (approved, ended) are told the plan; over the fake server, with real hook commands."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_plan
from paicli.common.events import ListSink, Notice
from paicli.config import Settings
from paicli.plan.model import PlanStatus
from paicli.policy.hook_config import HookConfig, HooksConfig
from paicli.runtime import Runtime, build_runtime
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is

LOG = """
import json, os, sys
payload = json.load(sys.stdin)
with open(os.path.join(payload["workspace"], "hooks.log"), "a") as log:
    log.write(json.dumps(payload) + "\\n")
if payload["event"] == "before_tool" and payload["arguments"].get("path") == "secret.txt":
    print(json.dumps({"decision": "refuse", "reason": "secret.txt is off limits"}))
"""


@pytest.fixture
async def runtime(fake: FakeLLM, workspace: Path) -> AsyncIterator[Runtime]:
    (workspace / "hook.py").write_text(LOG)
    command = f"{sys.executable} hook.py"
    hooks = {
        event: [HookConfig(command=command)] for event in ("before_tool", "after_tool", "plan_approved", "plan_end")
    }
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(TEST_KEY),
        base_url=fake.base_url,
        max_attempts=1,
        review=False,
        hooks=HooksConfig(**hooks),
    )
    runtime = build_runtime(settings, ListSink())
    yield runtime
    await runtime.aclose()


def logged(workspace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (workspace / "hooks.log").read_text().splitlines()]


async def test_plan_tasks_run_the_tool_hooks_and_the_plan_points_are_told_the_plan(
    fake: FakeLLM, runtime: Runtime
) -> None:
    (runtime.workspace / "notes.txt").write_text("notes\n")
    (runtime.workspace / "secret.txt").write_text("key\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"read": []}, summary="read them", types={"read": "FILE_READ"})))
    fake.on(all_of_task("read", has_tool_result("read_file")), Reply.text("notes say notes"))
    fake.on(
        task_is("read"), Reply.tool_calls([("read_file", {"path": "notes.txt"}), ("read_file", {"path": "secret.txt"})])
    )
    script_summary(fake, "Read.")
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="read the notes")
    assert outcome.status is PlanStatus.COMPLETED
    events = logged(runtime.workspace)
    approved, *calls, ended = events  # the two reads run at the same time: their hooks in either order
    assert (approved["event"], ended["event"]) == ("plan_approved", "plan_end")
    assert approved["plan"]["summary"] == "read them" and approved["plan"]["goal"] == "read the notes"
    assert [t["id"] for t in approved["plan"]["tasks"]] == ["read"] and approved["task_id"] is None
    seen = sorted((e["event"], e["arguments"]["path"], e["task_id"]) for e in calls)
    assert seen == [
        ("after_tool", "notes.txt", "read"),
        ("before_tool", "notes.txt", "read"),
        ("before_tool", "secret.txt", "read"),
    ]
    assert ended["status"] == "COMPLETED" and ended["summary"] == "Read."
    task_messages = fake.requests[2].messages
    assert "secret.txt is off limits" in [m for m in task_messages if m["role"] == "tool"][1]["content"]
    assert not any(isinstance(e, Notice) and e.level == "warning" for e in sink.events)


def all_of_task(task_id: str, other: Any) -> Any:
    def predicate(body: Any) -> bool:
        return bool(task_is(task_id)(body)) and bool(other(body))

    return predicate
