"""The plan contract in the gate: a task's type and its declared `files` bound what its calls may do, in
every approval mode. Real tool box, real approval policy, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.llm.types import ToolCall
from paicli.policy.approval import ApprovalPolicy, Mode
from paicli.policy.audit import AuditLog, read_entries
from paicli.tools.base import Effect, ToolContext, ToolOutcome
from paicli.tools.task_scope import TaskScope
from paicli.tools.toolbox import ToolBox

READER = TaskScope("task_1", "FILE_READ", frozenset({Effect.READ}))
CHECKER = TaskScope("task_2", "VERIFICATION", frozenset({Effect.READ, Effect.EXECUTE}))
WRITER = TaskScope("task_3", "FILE_WRITE", frozenset({Effect.READ, Effect.WRITE}), ("app.py", "tests/"))


async def call(workspace: Path, scope: TaskScope, mode: Mode, name: str, **arguments: str) -> ToolOutcome:
    policy = ApprovalPolicy(workspace, mode=mode, audit=AuditLog(workspace.parent / "audit", workspace=workspace))
    box = ToolBox.default(gate=policy)
    ctx = ToolContext(workspace, task_id=scope.task_id, scope=scope)
    return await box.execute(ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ctx)


@pytest.mark.parametrize("mode", ["ask", "auto", "yolo"])
async def test_a_read_task_cannot_write_or_run_commands(workspace: Path, mode: Mode) -> None:
    written = await call(workspace, READER, mode, "write_file", path="notes.md", content="x")
    assert not written.ok and "out of scope" in written.output and "FILE_READ" in written.output
    assert not (workspace / "notes.md").exists()
    ran = await call(workspace, READER, mode, "execute_command", command="touch made")
    assert not ran.ok and "out of scope" in ran.output and not (workspace / "made").exists()
    (workspace / "a.txt").write_text("hi\n")
    assert (await call(workspace, READER, mode, "read_file", path="a.txt")).ok


async def test_a_verification_task_runs_commands_but_writes_no_file(workspace: Path) -> None:
    assert (await call(workspace, CHECKER, "yolo", "execute_command", command="echo ok")).ok
    edited = await call(workspace, CHECKER, "yolo", "write_file", path="x.py", content="")
    assert not edited.ok and "out of scope" in edited.output and not (workspace / "x.py").exists()


async def test_a_write_task_changes_only_its_declared_files(workspace: Path) -> None:
    assert (await call(workspace, WRITER, "auto", "write_file", path="app.py", content="a = 1\n")).ok
    assert (await call(workspace, WRITER, "auto", "write_file", path="./tests/test_app.py", content="")).ok
    assert (await call(workspace, WRITER, "auto", "write_file", path="tests/deep/er/t.py", content="")).ok
    refused = await call(workspace, WRITER, "yolo", "write_file", path="other.py", content="x")
    assert not refused.ok and "change only app.py, tests/" in refused.output and "other.py" in refused.output
    assert not (workspace / "other.py").exists()
    ran = await call(workspace, WRITER, "yolo", "execute_command", command="echo hi > other.py")
    assert not ran.ok and "out of scope" in ran.output and not (workspace / "other.py").exists()


@pytest.mark.parametrize("spelling", ["app.py/../other.py", "tests/../other.py", "testsx/a.py", "app.pyc", "APP.py"])
async def test_spellings_of_an_undeclared_path_are_refused(workspace: Path, spelling: str) -> None:
    refused = await call(workspace, WRITER, "yolo", "write_file", path=spelling, content="x")
    assert not refused.ok and "out of scope" in refused.output
    assert sorted(p.name for p in workspace.rglob("*") if ".git" not in p.parts) == []  # the fixture holds a .git


async def test_a_symlink_counts_as_where_it_leads(workspace: Path) -> None:
    (workspace / "app.py").write_text("old\n")
    (workspace / "other.py").write_text("keep\n")
    (workspace / "alias.py").symlink_to("app.py")
    (workspace / "sneaky.py").symlink_to("other.py")
    (workspace / "tests").symlink_to(".", target_is_directory=True)  # a declared folder that is the root
    assert (await call(workspace, WRITER, "yolo", "edit_file", path="alias.py", old_text="old", new_text="new")).ok
    assert (workspace / "app.py").read_text() == "new\n"
    refused = await call(workspace, WRITER, "yolo", "write_file", path="sneaky.py", content="x")
    assert not refused.ok and (workspace / "other.py").read_text() == "keep\n"


async def test_refusals_are_audited_as_out_of_scope(workspace: Path) -> None:
    await call(workspace, READER, "yolo", "write_file", path="n.md", content="x")
    entries = read_entries(workspace.parent / "audit")
    assert [e["decision"] for e in entries] == ["refused_out_of_scope"] and entries[0]["task_id"] == "task_1"
