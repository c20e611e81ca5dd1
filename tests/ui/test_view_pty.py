"""Seeing what the agent did, through a real pseudo-terminal: result previews, inline diffs, Ctrl+O and
/expand, /transcript, and a running command's timer and output."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result, last_message_contains
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
CTRL_O = "\x0f"
NO_PAGER = {"PAGER": ""}  # no pager: what would be paged is printed in place


def command_turn(spawn_repl: Spawn, fake: FakeLLM, command: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """The REPL, where the message `go` makes the model run `command`, then answer "All done."."""
    fake.on(lambda body: body["messages"][-1]["role"] == "tool", Reply.text("All done."), repeat=True)
    fake.on(last_message_contains("go"), Reply.tool_calls([("execute_command", {"command": command})]))
    child = spawn_repl(env=env)
    child.send("go" + ENTER)
    return child


def test_a_command_result_shows_its_error_lines_and_exit_code(spawn_repl: Spawn, fake: FakeLLM) -> None:
    child = command_turn(spawn_repl, fake, "ls nonexistent_dir; echo first; echo second; exit 3", NO_PAGER)
    expect_text(child, "⎿ exit code 3 · 3 lines")
    expect_text(child, "No such file or directory")
    expect_text(child, "first")
    expect_text(child, "second")
    expect_text(child, "All done.")


def test_a_long_output_is_cut_in_the_middle_and_ctrl_o_shows_it_whole(spawn_repl: Spawn, fake: FakeLLM) -> None:
    child = command_turn(spawn_repl, fake, "for i in $(seq 1 40); do echo row-$i; done", NO_PAGER)
    expect_text(child, "⎿ 40 lines")
    expect_text(child, "row-4")
    expect_text(child, "… 34 more lines · Ctrl+O shows all")
    expect_text(child, "row-40")
    expect_text(child, "All done.")
    child.expect_exact(PROMPT)
    child.send("half typed")
    child.send(CTRL_O)
    expect_text(child, "⏺ execute_command")
    for n in (17, 18, 19):  # the middle, hidden in the preview
        expect_text(child, f"row-{n}")
    child.expect_exact(PROMPT)
    expect_text(child, "half typed")  # what was typed before Ctrl+O is back, unsent
    child.send(ENTER)
    fake.wait_for_requests(3, timeout=5)
    assert fake.requests[-1].messages[-1]["content"] == "half typed"


def test_expand_uses_the_pager_when_there_is_one(spawn_repl: Spawn, fake: FakeLLM) -> None:
    # less is the default when PAGER is unset; named here for certain
    child = command_turn(spawn_repl, fake, "for i in $(seq 1 100); do echo row-$i; done", {"PAGER": "less"})
    expect_text(child, "All done.")
    child.expect_exact(PROMPT)
    child.send("/expand" + ENTER)
    expect_text(child, "row-1")
    child.send("q")
    child.expect_exact(PROMPT)


def test_an_edit_shows_its_diff_and_transcript_pages_the_whole_turn(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    fake.on(has_tool_result("edit_file"), Reply.text("Fixed the sign."))
    edit = {"path": "app.py", "old_text": "a - b", "new_text": "a + b"}
    fake.on(has_tool_result("read_file"), Reply.tool_calls([("edit_file", edit)]))
    fake.on(last_message_contains("fix add"), Reply.tool_calls([("read_file", {"path": "app.py"})]))
    child = spawn_repl(env=NO_PAGER)
    child.send("fix add" + ENTER)
    expect_text(child, "⎿ lines 1–2")
    expect_text(child, "⏺ edit_file app.py")
    expect_text(child, "⎿ edited app.py: replaced 1 line with 1 line +1 −1")
    expect_text(child, "-    return a - b")
    expect_text(child, "+    return a + b")
    expect_text(child, "Fixed the sign.")
    child.expect_exact(PROMPT)
    child.send("/transcript" + ENTER)
    expect_text(child, "› fix add")
    expect_text(child, "⏺ read_file app.py")
    expect_text(child, "⏺ edit_file app.py")
    expect_text(child, "+++ b/app.py")
    expect_text(child, "Fixed the sign.")
    child.expect_exact(PROMPT)


def test_expand_before_any_tool_says_so(spawn_repl: Spawn) -> None:
    child = spawn_repl()
    child.send("/expand" + ENTER)
    expect_text(child, "no tool output yet in this session")
    child.send(CTRL_O)
    expect_text(child, "no tool output yet in this session")
    child.expect_exact(PROMPT)


def test_a_running_command_shows_its_time_its_output_and_esc_cancels(spawn_repl: Spawn, fake: FakeLLM) -> None:
    child = command_turn(spawn_repl, fake, "echo warming up; echo still going; sleep 30; echo never")
    expect_text(child, "⏺ execute_command")
    child.expect(r"running \S*1\.\d+s", timeout=5)  # the timer ticks
    expect_text(child, "Esc cancels")
    expect_text(child, "warming up")
    expect_text(child, "still going")
    expect_text(child, "/help")  # the toolbar stays under it
    child.send("\x1b")
    expect_text(child, "cancelled", timeout=5)
    child.expect_exact(PROMPT)
    child.expect(pexpect.TIMEOUT, timeout=1.5)
    assert "never" not in child.before
    assert "running" not in child.before  # the cancelled command's line is gone with it


def test_approvals_ask_under_the_live_plan_which_keeps_updating_and_queue_visibly(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is

    plan = json.loads(
        plan_json(
            {"slow": [], "one": [], "two": []},
            summary="three at once",
            types={"slow": "COMMAND", "one": "COMMAND", "two": "COMMAND"},
        )
    )
    for task in plan["tasks"]:  # each removes a file of its own folder (a command task writes what it declares)
        task["files"] = [f"{task['id']}/"]
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    for task, command in (("slow", "sleep 1; echo rested"), ("one", "rm one/x.txt"), ("two", "rm two/x.txt")):
        fake.on(all_of(task_is(task), has_tool_result("execute_command")), Reply.text(f"{task} finished"))
        fake.on(task_is(task), Reply.tool_calls([("execute_command", {"command": command})]))
        (workspace / task).mkdir()
        (workspace / task / "x.txt").write_text("x\n")
    script_summary(fake, "Three tasks ran.")
    child = spawn_repl("--no-review", env=NO_PAGER)
    child.send("/plan three things" + ENTER)
    expect_text(child, "Enter")
    child.send(ENTER)
    # the live view (its heading, then a row per task) is drawn right above the question ...
    child.expect(r"Running plan(?:[^\n]*\n){4}[^\n]*approve execute_command · task (one|two)", timeout=15)
    first = child.match.group(1)
    expect_text(child, "1 more waiting")
    expect_text(child, "slow finished", timeout=10)  # ... and keeps updating while it waits
    child.send("y")
    second = "two" if first == "one" else "one"
    expect_text(child, f"approve execute_command · task {second}", timeout=10)
    child.send("y")
    expect_text(child, "Three tasks ran.", timeout=15)
    child.expect_exact(PROMPT)
    assert not (workspace / "one" / "x.txt").exists() and not (workspace / "two" / "x.txt").exists()
    child.send("/transcript" + ENTER)  # the plan's calls, each with its task
    expect_text(child, "› /plan three things")
    expect_text(child, "[slow] execute_command sleep 1; echo rested")
    expect_text(child, "rested")
    child.expect_exact(PROMPT)


def test_nothing_draws_over_a_question_and_the_timer_comes_back_after_it(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "stale.txt").write_text("x\n")
    child = command_turn(spawn_repl, fake, "rm stale.txt; sleep 2; echo gone")
    expect_text(child, "approve execute_command")
    expect_text(child, "esc")
    child.expect(pexpect.TIMEOUT, timeout=1.5)
    assert "running" not in child.before  # the running command's line waits for the answer
    child.send("y")
    expect_text(child, "running")
    expect_text(child, "Esc cancels")
    expect_text(child, "⎿ 1 line")
    expect_text(child, "All done.")
