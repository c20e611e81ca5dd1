"""The plan contract for commands: a task that declares `files` runs its commands with the workspace
read-only except those paths (real bubblewrap); a task without `files` keeps the whole workspace."""

from __future__ import annotations

import os
from pathlib import Path

from paicli.common.kinds import TaskType
from paicli.plan.contract import scope_of
from paicli.plan.model import Task
from paicli.sandbox import BwrapSandbox
from paicli.sandbox.bwrap import declared_writable
from paicli.tools.base import SandboxBlocked, ToolContext
from paicli.tools.builtin.execute_command import ExecuteCommand, ExecuteCommandArgs


def command_task(files: list[str] | None, task_type: TaskType = TaskType.COMMAND) -> Task:
    return Task(id="build", description="build it", type=task_type, files=files)


async def run(ctx: ToolContext, command: str) -> str:
    try:
        return await ExecuteCommand().run(ExecuteCommandArgs(command=command), ctx)
    except SandboxBlocked as blocked:
        return "BLOCKED " + blocked.result()


def in_task(workspace: Path, sandbox: BwrapSandbox, files: list[str] | None) -> ToolContext:
    return ToolContext(workspace=workspace, sandbox=sandbox, scope=scope_of(command_task(files)))


async def test_only_the_declared_paths_are_writable(workspace: Path, sandbox: BwrapSandbox) -> None:
    (workspace / "app.py").write_text("old\n")
    (workspace / "other.py").write_text("other\n")
    ctx = in_task(workspace, sandbox, ["app.py", "dist/", "docs/new.md"])
    output = await run(ctx, "echo new > app.py && mkdir -p dist/x && echo b > dist/x/bundle.js && echo d > docs/new.md")
    assert output.endswith("exit code 0"), output
    assert (workspace / "app.py").read_text() == "new\n"
    assert (workspace / "dist" / "x" / "bundle.js").exists() and (workspace / "docs" / "new.md").exists()
    output = await run(ctx, "echo changed > other.py")
    assert output.startswith("BLOCKED"), output
    assert "this task's declared files (app.py, dist/, docs/new.md)" in output
    assert (workspace / "other.py").read_text() == "other\n"


async def test_a_task_without_files_keeps_the_whole_workspace(workspace: Path, sandbox: BwrapSandbox) -> None:
    ctx = in_task(workspace, sandbox, None)
    output = await run(ctx, "mkdir -p a/b && echo x > a/b/c.txt && echo y > top.txt")
    assert output.endswith("exit code 0"), output
    assert (workspace / "a" / "b" / "c.txt").exists() and (workspace / "top.txt").exists()


def test_scope_of_carries_a_command_tasks_files() -> None:
    assert scope_of(command_task(["dist/"])).writable == ("dist/",)
    assert scope_of(command_task(["dist/"], TaskType.VERIFICATION)).writable == ("dist/",)
    assert scope_of(command_task(None)).writable is None
    assert "run commands that write only dist/" in scope_of(command_task(["dist/"])).describe()


def test_declared_paths_never_lead_out(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / "link")
    (workspace / ".git").mkdir()
    (workspace / "app.py").write_text("x")
    found = declared_writable(
        workspace,
        ["link/", "link/a.py", "../x/", "/etc/", ".git/", ".git/config", "app.py", "new/deeper/file.py", "out/"],
    )
    assert found == [workspace / "app.py", workspace / "new" / "deeper", workspace / "out"]
    assert list(outside.iterdir()) == []
