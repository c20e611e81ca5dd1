"""The main flows against a real server: `pytest -m live` with PAICLI_LIVE_BASE_URL (and PAICLI_LIVE_MODEL,
PAICLI_LIVE_API_KEY when the server needs them). Skipped when unset and never part of the default run
(pyproject deselects the marker). What a model answers varies: the checks ask for what any model fit to
drive an agent does (call the tool it is told to, follow a three-task plan), not for exact wording."""

from __future__ import annotations

import json
import os
import secrets
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import Finished, run_paicli, start_paicli

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("PAICLI_LIVE_BASE_URL"), reason="PAICLI_LIVE_BASE_URL is not set"),
]
TIMEOUT = 600  # a slow local model may take minutes for a plan


@pytest.fixture
def live_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
    env.update(HOME=str(home), PAICLI_BASE_URL=os.environ["PAICLI_LIVE_BASE_URL"])
    for source, target in (("PAICLI_LIVE_MODEL", "PAICLI_MODEL"), ("PAICLI_LIVE_API_KEY", "PAICLI_API_KEY")):
        if os.environ.get(source):
            env[target] = os.environ[source]
    return env


def test_doctor_finds_chat_working(live_env: dict[str, str]) -> None:
    done = run_paicli(["doctor", "--json"], live_env, timeout=TIMEOUT)
    assert done.code == 0, done.stdout + done.stderr
    assert {c["name"]: c["ok"] for c in json.loads(done.stdout)["checks"]}["chat"] is True


def test_chat_with_a_tool_call(live_env: dict[str, str], workspace: Path) -> None:
    word = f"pelican-{secrets.token_hex(3)}"
    (workspace / "secret.txt").write_text(f"{word}\n")
    prompt = "Read the file secret.txt with the read_file tool, then reply with the word it contains."
    done = run_paicli(["-C", str(workspace), "run", prompt, "--json"], live_env, timeout=TIMEOUT)
    assert done.code == 0, done.stderr
    assert "read_file" in [e["name"] for e in done.of("tool_call")]
    assert word in done.of("run_finished")[0]["content"]
    assert done.of("run_finished")[0]["usage"]["prompt_tokens"] > 0  # reported or estimated, never 0


def test_a_three_task_plan(live_env: dict[str, str], workspace: Path) -> None:
    (workspace / "numbers.txt").write_text("3\n4\n5\n")
    plan = {
        "goal": "Write the sum of the numbers in numbers.txt into sum.txt",
        "summary": "read, add, write",
        "tasks": [
            {
                "id": "task_1",
                "description": "Read numbers.txt",
                "type": "FILE_READ",
                "dependencies": [],
                "action": {"tool": "read_file", "args": {"path": "numbers.txt"}},
            },
            {
                "id": "task_2",
                "description": "Add up the numbers in task_1's result; answer with the sum only",
                "type": "ANALYSIS",
                "dependencies": ["task_1"],
            },
            {
                "id": "task_3",
                "description": "Write the sum from task_2 into sum.txt with the write_file tool",
                "type": "FILE_WRITE",
                "dependencies": ["task_2"],
                "files": ["sum.txt"],
            },
        ],
    }
    (workspace / "plan.json").write_text(json.dumps(plan))
    args = ["-C", str(workspace), "plan", "--from", str(workspace / "plan.json"), "--yes", "--json", "--no-review"]
    done = run_paicli(args, live_env, timeout=TIMEOUT)
    assert done.code == 0, done.stderr
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"
    assert [e["status"] for e in done.of("task_finished")] == ["COMPLETED"] * 3
    assert "12" in (workspace / "sum.txt").read_text()


def test_cancel(live_env: dict[str, str], workspace: Path) -> None:
    prompt = "Write a long essay, at least 3000 words, about the history of the sea."
    child = start_paicli(["-C", str(workspace), "run", prompt, "--json"], live_env)
    time.sleep(3)  # the request is under way (a delay before acting, not a timing assertion)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert Finished(child.returncode, stdout, stderr).code == 130, stderr
