"""`paicli plan GOAL --yes` and `paicli run` without --json: readable stdout and stderr for a person."""

from __future__ import annotations

import json
from pathlib import Path

from paicli.common.events import Notice, ToolCallEvent, ToolResultEvent
from paicli.headless import call_arguments, cut_at_word, progress_line
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, script_summary, system_is, task_is

CONTENT = 'def add(a, b):\n    """Add."""\n    return f"Hello, {a + b}"\n' * 20


def test_a_plan_without_json_prints_the_plan_once_readable_progress_and_a_report_on_stdout(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    plan = {
        "summary": "write the helper",
        "tasks": [
            {
                "id": "w",
                "description": "Write app.py with add()",
                "type": "FILE_WRITE",
                "dependencies": [],
                "files": ["app.py"],
            }
        ],
    }
    fake.on(system_is(PLANNER), Reply.text(json.dumps(plan)))
    fake.on(all_of(task_is("w"), has_tool_result("write_file")), Reply.text("Wrote app.py."))
    fake.on(task_is("w"), Reply.tool_calls([("write_file", {"path": "app.py", "content": CONTENT})]))
    script_summary(fake, "app.py now has add().")
    done = run_paicli(["-C", str(workspace), "plan", "add a helper", "--yes"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert done.stdout == "app.py now has add().\n"  # stdout ends with the answer, as for `run`
    err = done.stderr
    (usage,) = [line for line in err.splitlines() if line.startswith("Plan COMPLETED")]
    assert usage.startswith("Plan COMPLETED · ↑ ") and usage.endswith(" tokens")
    assert err.count("Plan (round 1, 1 task): write the helper") == 1
    assert "  w FILE_WRITE: Write app.py with add()" in err
    call = next(line for line in err.splitlines() if "→ write_file" in line)
    assert call.startswith("[w] → write_file app.py")  # the tool's own summary: the path it writes
    assert "{'" not in err and "\\n" not in err  # no Python dicts, no escaped newlines
    assert (workspace / "app.py").read_text() == CONTENT


def test_a_failed_plan_says_each_thing_once_to_the_user_with_advice_that_works_headless(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """Issue 32: the error came twice (stdout and stderr) with the model's "Do not retry it" and an allow rule in
    the repository's config, which a headless run ignores until trusted."""
    (workspace / "keep.txt").write_text("kept\n")
    action = {"tool": "execute_command", "args": {"command": "rm keep.txt"}}
    tasks = [
        {"id": "t1", "description": "remove it", "type": "COMMAND", "dependencies": [], "action": action},
        {"id": "t2", "description": "report", "type": "ANALYSIS", "dependencies": ["t1"]},
    ]
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "remove keep.txt", "tasks": tasks})))
    done = run_paicli(
        ["-C", str(workspace), "plan", "remove keep.txt", "--yes", "--max-replans", "0"], paicli_env(fake, home)
    )
    assert done.code == 1 and done.stdout == ""
    err = done.stderr
    assert err.count("`rm keep.txt` needs approval (rm deletes files)") == 1
    assert (
        'To allow such commands: allow = ["rm keep.txt"] in ~/.paicli/config.toml, or run with --approval yolo.' in err
    )
    assert "Do not retry" not in err and ".paicli/config.toml" not in err.replace("~/.paicli/config.toml", "")
    assert "■ t1 FAILED: the action execute_command failed (it was refused) (above)" in err
    lines = err.splitlines()
    assert lines[-2].startswith("Plan FAILED · ↑ ")
    assert lines[-1] == "paicli: plan failed: t1 failed; skipped: t2 (no replans left: 0 used)"
    assert (workspace / "keep.txt").exists()


def test_a_refusal_keeps_its_hint_and_arguments_read_as_a_person_writes_them() -> None:
    hint = "refused: ../x is outside the workspace (/w); use a path relative to the workspace " + "and so on " * 10
    line = progress_line(ToolResultEvent(task_id="t", name="write_file", ok=False, output=hint + "\nsecond line"))
    assert line is not None and line.startswith("[t] ✗ write_file: refused: ../x is outside")
    assert "use a path relative to the workspace" in line and "second line" not in line
    shown = call_arguments({"path": "app.py", "content": CONTENT, "limit": 5})
    assert shown.startswith('path=app.py content="def add(a, b): """Add."""') and "limit=5" in shown
    assert "\n" not in shown
    line = progress_line(ToolCallEvent(task_id=None, name="edit_file", arguments={"path": "a.py", "old_text": CONTENT}))
    assert line is not None and line.endswith("…") and len(line) < 200
    assert not line[:-1].endswith(" ")  # cut at a word, not in the middle of one


def test_cut_at_word() -> None:
    assert cut_at_word("short", 10) == "short"
    assert cut_at_word("one two three four", 12) == "one two…"
    assert cut_at_word("x" * 50, 10) == "x" * 9 + "…"  # no space to cut at


def test_a_cut_never_ends_inside_an_escape_or_a_word() -> None:
    assert cut_at_word("y" * 150 + "\\x1b" + "z", 153) == "y" * 150 + "…"  # not `\x…`
    assert cut_at_word("y" * 150 + "\\u202e" + "z", 155) == "y" * 150 + "…"
    shown = call_arguments({"command": "x" * 158 + "\x1b[2J rm -rf"})
    assert shown == "command=" + "x" * 158 + "…"  # the ESC is shown as \x1b, and not cut in half
    notice = progress_line(Notice(level="warning", message="word " * 200))
    assert notice is not None and notice.endswith("word…") and len(notice) <= 400
