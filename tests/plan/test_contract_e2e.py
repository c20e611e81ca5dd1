"""The plan contract end to end (issue 10's acceptance list): `paicli plan GOAL --yes --json` as a real
subprocess against the fake model server, on real files.

What the planner proposes is checked before anything runs (bad `files` or `action`, parallel writers of
one file: the planner is re-asked with the exact problem; a hand-written `--from` plan gets the same
error); what a task's calls may do is enforced in the gate (a read task cannot write, a write task only
its declared paths); a task that is one tool call runs without a model request, and a failing or
refused one fails the task, skips its dependents and reaches the replanner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paicli.policy.audit import audit_folder, read_entries
from paicli.tools.toolbox import data_marker
from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import Body, FakeLLM, Reply, all_of, has_tool_result, message_text
from tests.plan_script import PLANNER, REPLANNER, brief, requests_of, script_summary, system_is, task_is

REASKED = "Your plan could not be used: "
BASE = "import argparse\n\nparser = argparse.ArgumentParser()\n"
VERBOSE = 'parser.add_argument("--verbose", action="store_true")\n'
QUIET = 'parser.add_argument("--quiet", action="store_true")\n'


def task(id: str, type: str, deps: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": id, "description": f"do {id}", "type": type, "dependencies": deps or [], **extra}


def reply(*tasks: dict[str, Any]) -> str:
    return json.dumps({"summary": "the plan", "tasks": list(tasks)})


def plan(workspace: Path, fake: FakeLLM, home: Path, *extra: str) -> Finished:
    """`paicli plan` with a goal, or with `--from FILE` among `extra`."""
    goal = [] if "--from" in extra else ["change app.py"]
    return run_paicli(["-C", str(workspace), "plan", *goal, "--yes", "--json", *extra], paicli_env(fake, home))


def planner_requests(fake: FakeLLM) -> list[Body]:
    return [r.body for r in fake.requests if r.body is not None and system_is(PLANNER)(r.body)]


def last_text(body: Body) -> str:
    return message_text(body["messages"][-1])


def tool_result_contains(text: str) -> Callable[[Body], bool]:
    """Matches a request in which some tool result contains `text`."""
    return lambda body: any(m.get("role") == "tool" and text in message_text(m) for m in body.get("messages", []))


def refusals(done: Finished) -> list[dict[str, Any]]:
    return [e for e in done.of("tool_result") if not e["ok"]]


# ---- what the planner proposes: re-asked with the exact problem --------------------------------------------

GOOD = reply(task("t1", "FILE_READ", action={"tool": "read_file", "args": {"path": "app.py"}}))
BAD_PLANS = {
    "unknown action tool": (
        reply(task("t1", "FILE_READ", action={"tool": "cat_file", "args": {"path": "app.py"}})),
        "task \"t1\" has an action with the unknown tool 'cat_file'",
    ),
    "action on a FILE_WRITE task": (
        reply(
            task(
                "t1",
                "FILE_WRITE",
                files=["app.py"],
                action={"tool": "write_file", "args": {"path": "app.py", "content": "x"}},
            )
        ),
        'task "t1" is FILE_WRITE and cannot be one tool call: remove its "action"',
    ),
    "action on an ANALYSIS task": (
        reply(task("t1", "ANALYSIS", action={"tool": "read_file", "args": {"path": "app.py"}})),
        'task "t1" is ANALYSIS and cannot be one tool call: remove its "action"',
    ),
    "command as a FILE_READ action": (
        reply(task("t1", "FILE_READ", action={"tool": "execute_command", "args": {"command": "cat app.py"}})),
        'task "t1" is FILE_READ: its action must be a read-only tool, not execute_command',
    ),
    "file tool as a VERIFICATION action": (
        reply(task("t1", "VERIFICATION", action={"tool": "read_file", "args": {"path": "app.py"}})),
        'task "t1" is VERIFICATION: its action must be a command (execute_command), not read_file',
    ),
    "invalid action arguments": (
        reply(task("t1", "FILE_READ", action={"tool": "read_file", "args": {"file": "app.py"}})),
        "task \"t1\" has an action with bad arguments: read_file: 'path' is required; unexpected argument "
        "'file' (allowed: path, offset, limit)",
    ),
    "a FILE_WRITE task without files": (
        reply(task("t1", "FILE_WRITE")),
        'task "t1" is FILE_WRITE and must list the paths it may change in "files"',
    ),
    "a FILE_WRITE task with an empty files list": (
        reply(task("t1", "FILE_WRITE", files=[])),
        'task "t1" is FILE_WRITE and must list the paths it may change in "files"',
    ),
    "files above the workspace": (
        reply(task("t1", "FILE_WRITE", files=["../outside.py"])),
        "task \"t1\" declares '../outside.py', which is outside the workspace; use relative paths",
    ),
    "files as an absolute path": (
        reply(task("t1", "FILE_WRITE", files=["/etc/passwd"])),
        "task \"t1\" declares '/etc/passwd', which is outside the workspace; use relative paths",
    ),
    "files through a symlink out of the workspace": (
        reply(task("t1", "FILE_WRITE", files=["vendor/lib.py"])),
        'task "t1" declares vendor/lib.py: vendor/lib.py is outside the workspace',
    ),
    "files through a symlink inside the workspace": (
        reply(task("t1", "FILE_WRITE", files=["alias.py"])),
        'task "t1" declares alias.py, which leads through a symlink to app.py; declare app.py',
    ),
    "a folder declared without its slash": (
        reply(task("t1", "FILE_WRITE", files=["src"])),
        'task "t1" declares src, which is a folder; write src/ to cover what is in it',
    ),
    "files in .git": (
        reply(task("t1", "FILE_WRITE", files=[".git/hooks/pre-commit"])),
        'task "t1" declares .git/hooks/pre-commit: .git/hooks/pre-commit is protected',
    ),
    "files on a task that writes nothing": (
        reply(task("t1", "ANALYSIS", files=["app.py"])),
        'task "t1" is ANALYSIS, which changes nothing: drop its "files" (the paths a task may change)',
    ),
    "overlapping parallel writers": (
        reply(task("t1", "FILE_WRITE", files=["src/"]), task("t2", "FILE_WRITE", files=["./src/util.py"])),
        'tasks "t1" and "t2" both change src/util.py and neither depends on the other',
    ),
    "a command declaring what a writer changes": (
        reply(task("t1", "FILE_WRITE", files=["app.py"]), task("t2", "COMMAND", files=["app.py"])),
        'tasks "t1" and "t2" both change app.py and neither depends on the other',
    ),
}


@pytest.fixture
def project(workspace: Path, tmp_path: Path) -> Path:
    """app.py, alias.py → app.py, a src folder, vendor → a folder outside the workspace, a .git folder."""
    (workspace / "app.py").write_text(BASE)
    (workspace / "src").mkdir()
    (workspace / "alias.py").symlink_to("app.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "vendor").symlink_to(outside, target_is_directory=True)
    (workspace / ".git" / "hooks").mkdir(parents=True)
    return workspace


@pytest.mark.parametrize("case", list(BAD_PLANS), ids=list(BAD_PLANS))
def test_a_plan_breaking_the_contract_is_reasked_with_the_exact_problem(
    fake: FakeLLM, project: Path, home: Path, case: str
) -> None:
    bad, problem = BAD_PLANS[case]
    fake.on(system_is(PLANNER), Reply.text(bad), Reply.text(GOOD))
    script_summary(fake)
    done = plan(project, fake, home)
    assert done.code == 0, done.stderr
    _, second = planner_requests(fake)
    assert last_text(second).startswith(REASKED) and problem in last_text(second)
    assert "\n" not in last_text(second).split("\n\n")[0]  # the problem is one line
    (created,) = done.of("plan_created")  # the broken plan was never shown, approved or run
    assert created["plan"]["tasks"][0]["action"] == {"tool": "read_file", "args": {"path": "app.py"}}
    assert [e["status"] for e in done.of("task_finished")] == ["COMPLETED"]
    assert sorted(p.name for p in (project.parent / "outside").iterdir()) == []


@pytest.mark.parametrize("case", list(BAD_PLANS), ids=list(BAD_PLANS))
def test_a_hand_written_plan_breaking_the_contract_gets_the_same_problem(
    fake: FakeLLM, project: Path, home: Path, tmp_path: Path, case: str
) -> None:
    bad, problem = BAD_PLANS[case]
    if case == "a FILE_WRITE task without files":
        pytest.skip("a hand-written plan from before the contract may omit files (see the legacy test)")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(bad)
    done = plan(project, fake, home, "--from", str(plan_file))
    assert done.code == 2
    assert problem in done.stderr
    assert fake.requests == []


def test_a_planner_that_keeps_breaking_the_contract_fails_the_plan(fake: FakeLLM, project: Path, home: Path) -> None:
    bad, problem = BAD_PLANS["overlapping parallel writers"]
    fake.on(system_is(PLANNER), Reply.text(bad), repeat=True)
    done = plan(project, fake, home)
    assert done.code == 1
    assert len(planner_requests(fake)) == 3 and not done.of("plan_created")
    finished = done.of("plan_finished")[0]
    assert finished["status"] == "FAILED" and problem in finished["summary"]


# ---- the lost update: two writers of one file ----------------------------------------------------------------


def script_whole_file_writer(fake: FakeLLM, task_id: str, own: str, other: str) -> None:
    """A task whose model reads app.py and writes it back whole with its own line added: what it writes
    depends on what it read, so a parallel writer's change is lost unless the tasks run in order."""
    fake.on(all_of(task_is(task_id), has_tool_result("write_file")), Reply.text(f"{task_id}: added a flag"))
    fake.on(
        all_of(task_is(task_id), tool_result_contains(other.split('"')[1])),
        Reply.tool_calls([("write_file", {"path": "app.py", "content": BASE + other + own})]),
    )
    fake.on(
        all_of(task_is(task_id), has_tool_result("read_file")),
        Reply.tool_calls([("write_file", {"path": "app.py", "content": BASE + own})]),
    )
    fake.on(task_is(task_id), Reply.tool_calls([("read_file", {"path": "app.py"})]))


def test_two_writers_of_one_file_are_serialised_and_both_changes_survive(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "app.py").write_text(BASE)
    racing = reply(task("t1", "FILE_WRITE", files=["app.py"]), task("t2", "FILE_WRITE", files=["app.py"]))
    ordered = reply(task("t1", "FILE_WRITE", files=["app.py"]), task("t2", "FILE_WRITE", ["t1"], files=["app.py"]))
    fake.on(system_is(PLANNER), Reply.text(racing), Reply.text(ordered))
    script_whole_file_writer(fake, "t1", VERBOSE, QUIET)
    script_whole_file_writer(fake, "t2", QUIET, VERBOSE)
    script_summary(fake)
    done = plan(workspace, fake, home)
    assert done.code == 0, done.stderr
    reasked = last_text(planner_requests(fake)[1])
    assert 'tasks "t1" and "t2" both change app.py and neither depends on the other' in reasked
    assert done.of("plan_created")[0]["plan"]["tasks"][1]["dependencies"] == ["t1"]
    assert (workspace / "app.py").read_text() == BASE + VERBOSE + QUIET
    t1, t2 = requests_of(fake, "t1"), requests_of(fake, "t2")
    assert t1[-1].finished is not None and t2[0].started >= t1[-1].finished


def test_a_plan_from_before_the_contract_has_its_writers_serialised(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The issue's case as a `--from` file written before `files` existed: no dependency between two
    FILE_WRITE tasks of one file. It is accepted with a notice and run one writer after the other."""
    (workspace / "app.py").write_text(BASE)
    plan_file = tmp_path / "old.json"
    plan_file.write_text(reply(task("t1", "FILE_WRITE"), task("t2", "FILE_WRITE"), task("t3", "ANALYSIS")))
    script_whole_file_writer(fake, "t1", VERBOSE, QUIET)
    script_whole_file_writer(fake, "t2", QUIET, VERBOSE)
    fake.on(task_is("t3"), Reply.text("t3 done"))
    script_summary(fake)
    done = plan(workspace, fake, home, "--from", str(plan_file))
    assert done.code == 0, done.stderr
    notices = " ".join(e["message"] for e in done.of("notice")) + done.stderr
    assert "t1, t2 declare no files" in notices
    content = (workspace / "app.py").read_text()
    assert VERBOSE in content and QUIET in content
    created = {t["id"]: t["dependencies"] for t in done.of("plan_created")[0]["plan"]["tasks"]}
    assert created == {"t1": [], "t2": ["t1"], "t3": []}  # one writer after the other; t3 writes nothing


# ---- scope by type, in the gate ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "yolo"])
def test_a_read_tasks_model_cannot_write(fake: FakeLLM, workspace: Path, home: Path, mode: str) -> None:
    fake.on(system_is(PLANNER), Reply.text(reply(task("t1", "FILE_READ"))))
    fake.on(all_of(task_is("t1"), has_tool_result()), Reply.text("I may not write; NOTES.md should be written."))
    fake.on(task_is("t1"), Reply.tool_calls([("write_file", {"path": "NOTES.md", "content": "notes"})]))
    script_summary(fake)
    done = plan(workspace, fake, home, "--approval", mode)
    assert done.code == 0, done.stderr
    assert not (workspace / "NOTES.md").exists()
    (refused,) = refusals(done)
    assert refused["task_id"] == "t1" and "out of scope: t1 (FILE_READ) may read" in refused["output"]
    assert "Say in your answer what else must change" in refused["output"]
    entries = read_entries(audit_folder(home))
    assert [(e["tool"], e["decision"], e["task_id"]) for e in entries] == [("write_file", "refused_out_of_scope", "t1")]


def test_a_write_task_changes_only_its_declared_files(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "app.py").write_text(BASE)
    fake.on(system_is(PLANNER), Reply.text(reply(task("t1", "FILE_WRITE", files=["app.py"]))))
    fake.on(all_of(task_is("t1"), has_tool_result()), Reply.text("app.py changed; setup.py must change too."))
    fake.on(
        task_is("t1"),
        Reply.tool_calls(
            [
                ("write_file", {"path": "app.py", "content": BASE + VERBOSE}),
                ("write_file", {"path": "setup.py", "content": "VERSION = 2\n"}),
                ("edit_file", {"path": "./app.py", "old_text": "--verbose", "new_text": "--loud"}),
            ]
        ),
    )
    script_summary(fake)
    done = plan(workspace, fake, home, "--approval", "yolo")
    assert done.code == 0, done.stderr
    assert not (workspace / "setup.py").exists()
    assert (workspace / "app.py").read_text() == BASE + VERBOSE.replace("--verbose", "--loud")
    (refused,) = refusals(done)
    assert "t1 (FILE_WRITE) may read, and change only app.py; setup.py is not among them" in refused["output"]
    assert brief(requests_of(fake, "t1")[0].body).count("files you may change (nothing else): app.py") == 1


# ---- direct actions --------------------------------------------------------------------------------------


def test_a_direct_read_runs_without_a_model_request_and_feeds_its_dependent(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "app.py").write_text(BASE)
    fake.on(
        system_is(PLANNER),
        Reply.text(
            reply(
                task("t1", "FILE_READ", action={"tool": "read_file", "args": {"path": "app.py"}}),
                task("t2", "ANALYSIS", ["t1"]),
            )
        ),
    )
    fake.on(task_is("t2"), Reply.text("app.py builds an argument parser."))
    script_summary(fake)
    done = plan(workspace, fake, home)
    assert done.code == 0, done.stderr
    assert requests_of(fake, "t1") == []
    t2_brief = brief(requests_of(fake, "t2")[0].body)
    assert "ArgumentParser()" in t2_brief
    # the model reading the file's text is told it is data (issue 32); the user and scripts get the text itself
    assert data_marker("read_file") + "     1\timport argparse" in t2_brief
    assert data_marker("read_file") in fake.requests[-1].text  # the summary's view of the task results
    (call,) = done.of("tool_call")
    assert (call["task_id"], call["name"], call["arguments"]) == ("t1", "read_file", {"path": "app.py"})
    (result,) = done.of("tool_result")
    assert result["output"].startswith("     1\timport argparse") and "untrusted" not in done.stdout + done.stderr
    assert [e["status"] for e in done.of("task_finished")] == ["COMPLETED", "COMPLETED"]
    finished = done.of("plan_finished")[0]
    assert finished["requests"] == 2  # t2 and the summary (the planner's came before approval)
    assert finished["estimate"]["requests"] == 2  # t2 and the summary: the direct read costs none
    saved = json.loads(next((workspace / ".paicli" / "plans").glob("*.json")).read_text())
    assert saved["plan"]["tasks"][0]["action"] == {"tool": "read_file", "args": {"path": "app.py"}}


def test_a_direct_check_exiting_1_fails_skips_its_dependents_and_the_replanner_sees_its_output(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "expected.txt").write_text("alpha\nbeta\n")
    (workspace / "out.txt").write_text("alpha\ngamma\n")
    check = {"tool": "execute_command", "args": {"command": "diff -u expected.txt out.txt"}}
    fake.on(
        system_is(PLANNER),
        Reply.text(reply(task("t1", "VERIFICATION", action=check), task("t2", "ANALYSIS", ["t1"]))),
    )
    fake.on(system_is(REPLANNER), Reply.text(reply(task("t3", "ANALYSIS"))))
    fake.on(task_is("t3"), Reply.text("out.txt has gamma where beta is expected."))
    script_summary(fake)
    done = plan(workspace, fake, home, "--approval", "auto")
    assert done.code == 0, done.stderr
    status = {e["task_id"]: e for e in done.of("task_finished")}
    assert status["t1"]["status"] == "FAILED"
    assert "exit code 1" in status["t1"]["error"] and "+gamma" in status["t1"]["error"]
    assert "untrusted" not in status["t1"]["error"] and "failed (it exited with code 1):" in status["t1"]["error"]
    assert status["t2"]["status"] == "SKIPPED" and status["t2"]["error"] == "depends on t1, which failed"
    assert requests_of(fake, "t1") == [] and requests_of(fake, "t2") == []
    (replan,) = [r for r in fake.requests if r.body is not None and system_is(REPLANNER)(r.body)]
    assert "-beta" in replan.text and "+gamma" in replan.text and "exit code 1" in replan.text
    assert data_marker("execute_command") in replan.text  # the output in the error, marked as data for the model
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"


def test_a_direct_action_refused_by_the_gate_in_auto_mode_fails_the_task(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "keep.txt").write_text("kept\n")
    action = {"tool": "execute_command", "args": {"command": "rm keep.txt"}}  # destroys work: refused in auto
    fake.on(system_is(PLANNER), Reply.text(reply(task("t1", "COMMAND", action=action), task("t2", "ANALYSIS", ["t1"]))))
    done = plan(workspace, fake, home, "--approval", "auto", "--max-replans", "0")
    assert done.code == 1
    assert (workspace / "keep.txt").exists()
    status = {e["task_id"]: e for e in done.of("task_finished")}
    assert status["t1"]["status"] == "FAILED" and "approval mode is auto" in status["t1"]["error"]
    assert status["t2"]["status"] == "SKIPPED"
    assert len(fake.requests) == 1  # the planner only: no model request for the action or the skipped task
    (refused,) = refusals(done)
    assert refused["task_id"] == "t1" and refused["name"] == "execute_command"
    entries = read_entries(audit_folder(home))
    assert [(e["decision"], e["task_id"]) for e in entries] == [("refused_by_policy", "t1")]
    assert done.of("plan_finished")[0]["status"] == "FAILED"
