"""Secrets, end to end: the API key and a *TOKEN* variable, placed in a file the model reads and printed by
commands, never reach the model server, the JSON events, stderr, the audit log or the saved plans."""

from __future__ import annotations

import json
from pathlib import Path

from paicli.llm.types import ToolCall
from paicli.policy.audit import audit_folder
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox
from tests.conftest import TEST_KEY, Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is

TOKEN = "tok-9f8e7d6c5b4a3921"
SECRETS = (TEST_KEY, TOKEN)
CALLS = [
    ("read_file", {"path": "notes.txt"}),
    ("grep_code", {"pattern": "sk-|tok-"}),
    ("execute_command", {"command": "cat notes.txt && grep -rn tok- ."}),
    ("execute_command", {"command": "echo key=$PAICLI_API_KEY token=$DEPLOY_TOKEN; env | grep -i -e key -e token"}),
]


def plant(workspace: Path) -> None:
    (workspace / "notes.txt").write_text(f"api key: {TEST_KEY}\ndeploy token: {TOKEN}\n")


def assert_nowhere(fake: FakeLLM, done: Finished, home: Path, *extra: Path) -> None:
    bodies = json.dumps([r.body for r in fake.requests])
    audit = "".join(p.read_text() for p in audit_folder(home).glob("*.jsonl"))
    saved = "".join(p.read_text() for folder in extra for p in folder.rglob("*") if p.is_file())
    for secret in SECRETS:
        assert secret not in bodies, "a secret reached the model server"
        assert secret not in done.stdout, "a secret is in the JSON events"
        assert secret not in done.stderr
        assert secret not in audit, "a secret is in the audit log"
        assert secret not in saved, "a secret is in a saved plan"
    assert audit and "***" in bodies


def test_secrets_in_files_and_command_output_are_masked_everywhere(fake: FakeLLM, workspace: Path, home: Path) -> None:
    plant(workspace)
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write('allow = ["echo", "env"]\n')
    fake.on(has_tool_result("read_file"), Reply.text("The notes hold a key and a token."))
    fake.on("what is in the notes", Reply.tool_calls(CALLS))
    env = paicli_env(fake, home, DEPLOY_TOKEN=TOKEN)

    done = run_paicli(["-C", str(workspace), "run", "what is in the notes", "--json"], env)

    assert done.code == 0, done.stderr
    results = done.of("tool_result")
    assert len(results) == 4 and all(r["ok"] for r in results), results
    assert "api key: ***" in results[0]["output"] and "deploy token: ***" in results[2]["output"]
    assert "key= token=" in results[3]["output"]  # the child's environment has no secrets at all
    assert_nowhere(fake, done, home)


def test_secrets_stay_out_of_a_plan_and_its_saved_files(fake: FakeLLM, workspace: Path, home: Path) -> None:
    plant(workspace)
    fake.on(system_is(PLANNER), Reply.text(plan_json({"task_1": []}, summary="read the notes")))
    fake.on(all_of(task_is("task_1"), has_tool_result()), Reply.text("The notes hold a key and a token."))
    fake.on(task_is("task_1"), Reply.tool_calls(CALLS[:3]))
    script_summary(fake)
    env = paicli_env(fake, home, DEPLOY_TOKEN=TOKEN)

    done = run_paicli(["-C", str(workspace), "plan", "read the notes", "--yes", "--json"], env)

    assert done.code == 0, done.stderr
    plans = workspace / ".paicli" / "plans"
    assert list(plans.glob("*.json"))
    assert_nowhere(fake, done, home, plans)


async def test_a_secret_cut_by_a_tools_own_limit_does_not_leak_in_pieces(tmp_path: Path) -> None:
    """At most a piece shorter than half the secret can remain (see toolbox.mask_fragments)."""
    key = "sk-live-" + "0123456789abcdef" * 2
    box = ToolBox.default()
    ctx = ToolContext(tmp_path, secrets=[key], output_limit=300)
    (tmp_path / "long.txt").write_text("x" * 1975 + key + "\n")  # read_file cuts lines at 2000 characters
    for cut in range(60, 100, 7):  # where the command's output is cut in the middle, around the key
        command = f"printf '%0{cut}d{key}%05000d' 0 0"
        call = ToolCall(id="c", name="execute_command", arguments=json.dumps({"command": command}))
        outcome = await box.execute(call, ctx)
        assert "omitted" in outcome.output and key[: len(key) // 2] not in outcome.output, outcome.output
    read = await box.execute(ToolCall(id="c", name="read_file", arguments='{"path": "long.txt"}'), ctx)
    assert "line cut" in read.output and key[: len(key) // 2] not in read.output and "***" in read.output
