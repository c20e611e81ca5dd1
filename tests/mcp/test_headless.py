"""MCP servers in `paicli run` and `paicli plan --yes`: the real CLI in a subprocess, the test server
started by paicli over stdio, the fake model calling its tools."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from tests.conftest import Finished, paicli_env, run_paicli, start_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.mcp.conftest import SERVER, pids, read_marks, server_toml, wait_for_mark, wait_gone
from tests.plan_script import PLANNER, script_summary, system_is, task_is

TOKEN = "tok-fake-0123456789abcdef"


def configure(home: Path, text: str) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write(text)


def run(fake: FakeLLM, workspace: Path, home: Path, prompt: str, *flags: str) -> Finished:
    env = paicli_env(fake, home, FAKE_TOKEN=TOKEN)
    return run_paicli(["-C", str(workspace), "run", prompt, "--json", *flags], env)


def offered(fake: FakeLLM) -> list[str]:
    return [tool["function"]["name"] for tool in fake.requests[0].body["tools"]]


def test_the_model_calls_an_mcp_tool_and_events_name_it(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    configure(home, server_toml("t", marks, trust_annotations=True, env={"LEAK": "${FAKE_TOKEN}"}))
    fake.on(has_tool_result("mcp__t__leak"), Reply.text("done"))
    fake.on(has_tool_result("mcp__t__add"), Reply.tool_calls([("mcp__t__leak", {})]))
    fake.on("add them", Reply.tool_calls([("mcp__t__add", {"a": 2, "b": 40})]))
    done = run(fake, workspace, home, "add them", "--approval", "yolo")
    assert done.code == 0, done.stderr
    assert offered(fake)[:7] == [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "glob_files",
        "grep_code",
        "execute_command",
    ] and "mcp__t__add" in offered(fake)
    calls, results = done.of("tool_call"), done.of("tool_result")
    assert [c["name"] for c in calls] == ["mcp__t__add", "mcp__t__leak"] and calls[0]["arguments"] == {"a": 2, "b": 40}
    assert [r["name"] for r in results] == ["mcp__t__add", "mcp__t__leak"] and all(r["ok"] for r in results)
    assert results[0]["output"] == "42"  # the tool's own text: the data marker is the model's only
    audit = [json.loads(line) for file in (home / ".paicli" / "audit").glob("*.jsonl") for line in file.open()]
    # read-only by its trusted hint: allowed like read_file; leak is risky: yolo approved it
    decisions = [(d["tool"], d["decision"]) for d in audit]
    assert decisions == [("mcp__t__add", "allowed"), ("mcp__t__leak", "approved_by_mode")]
    assert TOKEN not in done.stdout + done.stderr and "the token is ***" in results[1]["output"]
    assert TOKEN not in json.dumps([r.body for r in fake.requests])  # masked before the model saw it
    assert wait_gone(pids(marks)) == []


def test_auto_refuses_a_risky_mcp_tool_and_a_failed_server_is_a_notice(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    # no trust_annotations: even the read-only hint does not count; and a server that cannot start
    configure(home, server_toml("t", marks) + server_toml("dead", None, "--exit-at-start"))
    fake.on(has_tool_result("mcp__t__add"), Reply.text("over"))
    fake.on("add", Reply.tool_calls([("mcp__t__add", {"a": 1, "b": 2})]))
    refused = run(fake, workspace, home, "add")
    assert refused.code == 0, refused.stderr
    (result,) = refused.of("tool_result")
    assert not result["ok"] and "needs approval" in result["output"]
    assert "approval mode is auto" in result["output"] and 'allow = ["mcp__t__add"]' in result["output"]
    assert "add" not in read_marks(marks, "calls")
    audit = [json.loads(line) for file in (home / ".paicli" / "audit").glob("*.jsonl") for line in file.open()]
    assert [(d["tool"], d["decision"]) for d in audit] == [("mcp__t__add", "refused_by_policy")]
    (notice,) = [n for n in refused.of("notice") if "dead" in n["message"]]
    assert notice["level"] == "warning"
    assert "exited with code 3" in notice["message"] and "told to exit at start" in notice["message"]
    assert not any(name.startswith("mcp__dead__") for name in offered(fake))


def test_an_untrusted_mcp_json_is_not_started_headless(fake: FakeLLM, workspace: Path, home: Path, marks: Path) -> None:
    entry = {"command": sys.executable, "args": [str(SERVER)], "env": {"MCP_TEST_MARKS": str(marks)}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    fake.on("hi", Reply.text("hello"))
    done = run(fake, workspace, home, "hi")
    assert done.code == 0
    assert "ignoring MCP servers" in done.stderr and "not trusted" in done.stderr
    assert not any(name.startswith("mcp__") for name in offered(fake))
    assert pids(marks) == []


def test_sigint_cancels_a_slow_mcp_call_tells_the_server_and_leaves_no_process(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    configure(home, server_toml("t", marks))
    fake.on("wait", Reply.tool_calls([("mcp__t__slow", {"seconds": 60})]))
    env = paicli_env(fake, home)
    process = start_paicli(["-C", str(workspace), "run", "wait", "--json", "--approval", "yolo"], env)
    try:
        assert wait_for_mark(marks, "calls", timeout=60), "the slow call never reached the server"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert wait_for_mark(marks, "cancelled"), "the server was not told"
    assert wait_gone(pids(marks)) == []


def test_a_plan_uses_mcp_tools_in_tasks_and_as_direct_actions(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    configure(home, server_toml("t", marks, trust_annotations=True))
    tasks = [
        {
            "id": "sum",
            "description": "add 2 and 3",
            "type": "FILE_READ",
            "dependencies": [],
            "action": {"tool": "mcp__t__add", "args": {"a": 2, "b": 3}},
        },
        {
            "id": "say",
            "description": "echo the sum through the MCP echo tool",
            "type": "COMMAND",
            "dependencies": ["sum"],
        },
        {
            "id": "check",
            "description": "echo done",
            "type": "COMMAND",  # a VERIFICATION task may not call it: it names no path (test_task_files.py)
            "dependencies": ["say"],
            "action": {"tool": "mcp__t__echo", "args": {"text": "done"}},
        },
        {"id": "think", "description": "reason about it", "type": "ANALYSIS", "dependencies": ["sum"]},
    ]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "use the MCP tools", "tasks": tasks})))
    fake.on(all_of(task_is("say"), has_tool_result("mcp__t__echo")), Reply.text("said 5"))
    fake.on(task_is("say"), Reply.tool_calls([("mcp__t__echo", {"text": "5"})]))
    fake.on(all_of(task_is("think"), has_tool_result("mcp__t__echo")), Reply.text("could not echo"))
    fake.on(task_is("think"), Reply.tool_calls([("mcp__t__echo", {"text": "no"})]))
    script_summary(fake, "Done.")
    env = paicli_env(fake, home)
    done = run_paicli(["-C", str(workspace), "plan", "go", "--yes", "--json", "--approval", "yolo"], env)
    assert done.code == 0, done.stderr
    planner_prompt = fake.requests[0].body["messages"][0]["content"]
    assert "# Tools of the user's MCP servers" in planner_prompt
    assert "- mcp__t__add {a, b} (read-only): Add two integers." in planner_prompt
    assert "- mcp__t__echo {text}: Echo the text back." in planner_prompt
    finished = {e["task_id"]: e for e in done.of("task_finished")}
    assert {task: e["status"] for task, e in finished.items()} == {
        "sum": "COMPLETED",
        "say": "COMPLETED",
        "check": "COMPLETED",
        "think": "COMPLETED",
    }
    assert finished["sum"]["result"] == "5" and finished["check"]["result"].endswith("echo: done")
    results = {(r["task_id"], r["name"]): r for r in done.of("tool_result")}
    assert results[("say", "mcp__t__echo")]["ok"]
    refused = results[("think", "mcp__t__echo")]  # ANALYSIS only reads: out of scope, even in yolo
    assert not refused["ok"] and "out of scope: think (ANALYSIS) may read" in refused["output"]
    assert read_marks(marks, "calls") == ["add", "echo", "echo"]
    task_requests = [r.body for r in fake.requests if r.body.get("tools")]
    assert len(task_requests) >= 4
    assert len({json.dumps(body["tools"]) for body in task_requests}) == 1  # the same bytes for every task


def test_allow_and_deny_rules_name_mcp_tools_by_pattern(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    configure(home, 'allow = ["mcp__t__*"]\ndeny = ["mcp__t__boom"]\n' + server_toml("t", marks))
    fake.on(has_tool_result("mcp__t__echo"), Reply.text("over"))
    fake.on("go", Reply.tool_calls([("mcp__t__boom", {}), ("mcp__t__echo", {"text": "hi"})]))
    done = run(fake, workspace, home, "go")  # auto: only the rules decide
    assert done.code == 0, done.stderr
    boom, echo = done.of("tool_result")
    assert not boom["ok"] and "refused by the deny rule 'mcp__t__boom'" in boom["output"]
    assert echo["ok"] and echo["output"].endswith("echo: hi")
    assert read_marks(marks, "calls") == ["echo"]


def test_a_plan_file_with_mcp_actions_is_checked_once_the_servers_run(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path, tmp_path: Path
) -> None:
    configure(home, server_toml("t", marks, trust_annotations=True))
    good = {
        "goal": "sum",
        "summary": "s",
        "tasks": [
            {
                "id": "a",
                "description": "add",
                "type": "FILE_READ",
                "dependencies": [],
                "action": {"tool": "mcp__t__add", "args": {"a": 20, "b": 22}},
            }
        ],
    }
    (tmp_path / "good.json").write_text(json.dumps(good))
    script_summary(fake, "It is 42.")
    env = paicli_env(fake, home)
    done = run_paicli(["-C", str(workspace), "plan", "--from", str(tmp_path / "good.json"), "--yes", "--json"], env)
    assert done.code == 0, done.stderr
    assert done.of("task_finished")[0]["result"] == "42"
    bad = json.loads(json.dumps(good))
    bad["tasks"][0]["action"]["tool"] = "mcp__t__nope"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = run_paicli(["-C", str(workspace), "plan", "--from", str(tmp_path / "bad.json"), "--yes", "--json"], env)
    assert refused.code == 2
    assert "the plan breaks the plan contract" in refused.stderr and "unknown tool 'mcp__t__nope'" in refused.stderr
    # A check whose action calls a tool that may change things (echo has no read-only hint): refused before
    # anything runs, as the gate would refuse it in the task (issue 29), and the server never called.
    check = json.loads(json.dumps(good))
    check["tasks"][0].update(type="VERIFICATION", action={"tool": "mcp__t__echo", "args": {"text": "hi"}})
    (tmp_path / "check.json").write_text(json.dumps(check))
    refused = run_paicli(["-C", str(workspace), "plan", "--from", str(tmp_path / "check.json"), "--yes", "--json"], env)
    assert refused.code == 2 and not refused.of("task_started")
    assert (
        'task "a" is VERIFICATION: its action mcp__t__echo may change things outside paicli\'s view' in refused.stderr
    )
    assert "echo" not in read_marks(marks, "calls")
