"""Small suites for the eval tests, written into a folder: each task's starting files, hidden files and
settings, and the fake model's replies that make an agent in chat mode write a file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from paicli.cli import main
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result

# A cheap check (no pytest start-up): the answer file holds the expected line.
ANSWER_CHECK = 'grep -qx "$(cat expected.txt)" answer.txt'


def write_suite(root: Path, tasks: list[Mapping[str, Any]], **defaults: Any) -> Path:
    """`root`/suite.toml with `tasks`: dicts of id, goal, `files` (the start), `hidden` (files), and any
    other TaskSpec field."""
    lines = ['name = "test-suite"', "[defaults]"]
    lines += [f"{name} = {json.dumps(value)}" for name, value in defaults.items()]
    for task in tasks:
        folder = root / task["id"]
        for part, files in (("start", task.get("files", {})), ("hidden", task.get("hidden", {}))):
            (folder / part).mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (folder / part / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / part / name).write_text(text)
        lines += ["[[tasks]]", f"start = {json.dumps(task['id'] + '/start')}"]
        lines += [f"hidden = {json.dumps(task['id'] + '/hidden')}"]
        for name, value in task.items():
            if name not in ("files", "hidden"):
                lines.append(f"{name} = {json.dumps(value)}")
    (root / "suite.toml").write_text("\n".join(lines) + "\n")
    return root / "suite.toml"


def answer_task(task_id: str, expected: str = "42", **more: Any) -> dict[str, Any]:
    """A task whose goal names it; its hidden check wants `expected` in answer.txt."""
    return {
        "id": task_id,
        "goal": f"write the answer for {task_id}",
        "files": {"README": "answer.txt holds the answer\n"},
        "hidden": {"expected.txt": expected + "\n"},
        "check": ANSWER_CHECK,
        **more,
    }


def script_writer(fake: FakeLLM, goal: str, path: str, content: str, *, then: Reply | None = None) -> None:
    """In chat mode the agent with `goal` writes `path`, then says it is done (or gets `then`)."""
    fake.on(all_of(goal, has_tool_result("write_file")), then or Reply.text("Done."), repeat=True)
    fake.on(goal, Reply.tool_calls([("write_file", {"path": path, "content": content})]), repeat=True)


def eval_env(monkeypatch: pytest.MonkeyPatch, fake: FakeLLM, home: Path) -> None:
    """The environment `paicli eval` (in this process) and its agents run with: the fake server, `home`."""
    for name in list(os.environ):
        if name.startswith(("PAICLI_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PAICLI_API_KEY", TEST_KEY)
    monkeypatch.setenv("PAICLI_BASE_URL", fake.base_url)
    monkeypatch.setenv("PAICLI_MODEL", "fake-model")


def run_eval(args: list[str]) -> int:
    """`paicli eval run ARGS` in this process."""
    return main(["eval", "run", *args])


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def results(out: Path) -> list[dict[str, Any]]:
    return json_lines((out / "results.jsonl").read_text())
