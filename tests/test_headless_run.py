"""`paicli run` as a real subprocess against the fake model server over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import TEST_KEY, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result


def script_fix_turn(fake: FakeLLM) -> None:
    fake.on(has_tool_result("execute_command"), Reply.text("Fixed: app.py now prints 4, and it runs."))
    fake.on(
        has_tool_result("edit_file"),
        Reply.tool_calls([("execute_command", {"command": "python3 app.py"})], chunk=3),
    )
    fake.on(
        has_tool_result("read_file"),
        Reply.tool_calls([("edit_file", {"path": "app.py", "old_text": "1 + 1", "new_text": "2 + 2"})], chunk=4),
    )
    fake.on("fix the sum", Reply.tool_calls([("read_file", {"path": "app.py"})], chunk=2))


def test_run_reads_edits_and_runs_with_json_events(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "app.py").write_text("print(1 + 1)\n")
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write('allow = ["python3 app.py"]\n')  # headless runs are `auto`: running code needs a rule
    script_fix_turn(fake)
    done = run_paicli(["-C", str(workspace), "run", "fix the sum", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    events = done.events()  # every stdout line is one JSON object
    assert [e["name"] for e in done.of("tool_call")] == ["read_file", "edit_file", "execute_command"]
    assert done.of("tool_call")[1]["arguments"] == {"path": "app.py", "old_text": "1 + 1", "new_text": "2 + 2"}
    results = done.of("tool_result")
    assert all(r["ok"] for r in results) and "4" in results[2]["output"]
    # additions: the edit's diff (the other results have no `diff` key); a command's streamed output is not written
    assert [("diff" in r) for r in results] == [False, True, False]
    assert "-print(1 + 1)\n+print(2 + 2)" in results[1]["diff"]
    assert not done.of("command_output")
    assert events[-1]["event"] == "run_finished" and "prints 4" in events[-1]["content"]
    assert events[-1]["usage"]["prompt_tokens"] > 0
    assert all(isinstance(e["ts"], float) for e in events)
    assert (workspace / "app.py").read_text() == "print(2 + 2)\n"
    # the tool results travel in the wire format: one role=tool message per call with its id
    last = fake.requests[-1].messages
    calls = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answers = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert calls == answers and len(calls) == 3


def test_run_prints_only_the_answer_on_stdout_without_json(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("hello", Reply.text("Hi there, **friend**."))
    done = run_paicli(["run", "hello", "-C", str(workspace)], paicli_env(fake, home))
    assert done.code == 0
    assert done.stdout == "Hi there, **friend**.\n"


def test_missing_key_exits_2_naming_the_variables(workspace: Path, home: Path, fake: FakeLLM) -> None:
    env = paicli_env(fake, home, PAICLI_BASE_URL="https://api.example.invalid/v1")  # a remote endpoint
    del env["PAICLI_API_KEY"]
    done = run_paicli(["-C", str(workspace), "run", "x"], env)
    assert done.code == 2
    assert "PAICLI_API_KEY" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert fake.requests == []


def test_a_server_on_the_loopback_needs_no_key_and_gets_none(workspace: Path, home: Path, fake: FakeLLM) -> None:
    fake.on("hello", Reply.text("Hi."))
    env = paicli_env(fake, home)
    del env["PAICLI_API_KEY"]
    done = run_paicli(["-C", str(workspace), "run", "hello"], env)
    assert done.code == 0, done.stderr
    assert "authorization" not in fake.requests[0].headers


def test_unauthorized_exits_1_with_a_hint_and_no_key(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("x", Reply.error(401, f"Incorrect API key provided: {TEST_KEY}"))
    done = run_paicli(["-C", str(workspace), "run", "x", "--json"], paicli_env(fake, home))
    assert done.code == 1
    assert "API key" in done.stderr
    assert TEST_KEY not in done.stderr + done.stdout
    assert len(fake.requests) == 1


def test_server_errors_are_retried_then_reported_with_the_server_message(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on("x", Reply.error(500, "upstream overloaded"), repeat=True)
    done = run_paicli(["-C", str(workspace), "run", "x"], paicli_env(fake, home))
    assert done.code == 1
    assert "upstream overloaded" in done.stderr
    assert len(fake.requests) == 3


def test_version_and_usage_errors(workspace: Path, home: Path, fake: FakeLLM) -> None:
    env = paicli_env(fake, home)
    version = run_paicli(["--version"], env)
    assert version.code == 0 and version.stdout.startswith("paicli ")
    bad = run_paicli(["--max-parallel", "zero", "run", "x"], env)
    assert bad.code == 2
    no_goal = run_paicli(["-C", str(workspace), "plan", "--yes"], env)
    assert no_goal.code == 2 and "GOAL" in no_goal.stderr
    no_tty = run_paicli(["-C", str(workspace), "plan", "do it"], env)
    assert no_tty.code == 2 and "--yes" in no_tty.stderr


def test_the_repl_without_a_terminal_points_to_paicli_run(fake: FakeLLM, workspace: Path, home: Path) -> None:
    done = run_paicli(["-C", str(workspace)], paicli_env(fake, home))  # stdin is /dev/null
    assert done.code == 2 and "paicli run" in done.stderr
    assert fake.requests == []


def test_arguments_nested_too_deeply_are_a_tool_error_and_the_turn_goes_on(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """Issue 27, finding 2: 100,000 nested `[` as a call's arguments once ended paicli with a RecursionError."""
    deep = "[" * 100_000 + "]" * 100_000
    fake.on(has_tool_result("read_file"), Reply.text("Sorry, I will send flat arguments."))
    fake.on("read it", Reply.tool_calls([("read_file", deep)], chunk=20_000))
    done = run_paicli(["-C", str(workspace), "run", "read it", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr[-2000:]
    (call,) = done.of("tool_call")
    assert call["name"] == "read_file" and call["arguments"] == deep  # the model's own text
    (result,) = done.of("tool_result")
    assert result["ok"] is False
    assert "read_file: the arguments are nested too deeply (more than 100 levels" in result["output"]
    assert "\n" not in result["output"].strip()
    assert done.of("run_finished")[0]["content"] == "Sorry, I will send flat arguments."
    assert len(fake.requests) == 2
    (answer,) = [m for m in fake.requests[1].messages if m["role"] == "tool"]
    assert answer["tool_call_id"] == "call_1" and "nested too deeply" in answer["content"]
    (audited,) = [json.loads(line) for log in (home / ".paicli" / "audit").glob("*.jsonl") for line in log.open()]
    assert audited["decision"] == "invalid" and "nested too deeply" in audited["reason"]

    fake.on("go on", Reply.text("Going on."))  # the saved conversation, with that call in it, reads back
    again = run_paicli(["-C", str(workspace), "run", "-c", "go on", "--json"], paicli_env(fake, home))
    assert again.code == 0, again.stderr[-2000:]
    resent = [c["function"]["arguments"] for m in fake.requests[2].messages for c in m.get("tool_calls") or []]
    assert resent == [deep]


def test_json_lines_arrive_whole_through_a_non_blocking_pipe_read_late(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """O_NONBLOCK belongs to the pipe, shared with whoever made it: paicli's stdout can be non-blocking
    without paicli asking. A 200 KB line to a reader that comes late was cut at the pipe's size (64 or
    128 KB), the rest lost, and paicli exited 0; now it waits for the reader."""
    deep = "[" * 100_000 + "]" * 100_000
    fake.on(has_tool_result("read_file"), Reply.text("Sorry."))
    fake.on("read it", Reply.tool_calls([("read_file", deep)], chunk=20_000))
    read, write = os.pipe()
    os.set_blocking(write, False)
    command = [sys.executable, "-m", "paicli", "-C", str(workspace), "run", "read it", "--json"]
    env = paicli_env(fake, home)
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    chunks: list[bytes] = []

    def late_reader() -> None:
        time.sleep(1.0)
        with os.fdopen(read, "rb") as stream:
            while chunk := stream.read1(1 << 16):
                chunks.append(chunk)

    reader = threading.Thread(target=late_reader)
    reader.start()
    _, stderr = proc.communicate(timeout=60)
    reader.join()
    assert proc.returncode == 0, stderr.decode()[-2000:]
    events = [json.loads(line) for line in b"".join(chunks).decode().splitlines()]
    assert [e["event"] for e in events if e["event"] != "usage"] == ["tool_call", "tool_result", "run_finished"]
    assert events[[e["event"] for e in events].index("tool_call")]["arguments"] == deep
