"""The plan contract for commands: a task that declares `files` runs its commands with the workspace
read-only except those paths (real bubblewrap), a new file as that file alone; a task without `files`
writes nothing in the workspace but tool caches (issue 29: its writes would race a parallel writer's)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from paicli.common.kinds import TaskType
from paicli.plan.contract import scope_of
from paicli.plan.model import Task
from paicli.sandbox import BwrapSandbox
from paicli.sandbox.bwrap import declared_writable
from paicli.sandbox.containment import Placeholder
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


async def test_a_task_without_files_writes_nothing_but_tool_caches(workspace: Path, sandbox: BwrapSandbox) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / ".pytest_cache").mkdir()
    ctx = in_task(workspace, sandbox, None)
    for command in (
        "echo CMD-LINE >> a.txt",
        "echo CMD-LINE >> 'a.txt'",
        'sed -i "s/a/b/" ./a.txt',
        "mkdir -p a/b && echo x > a/b/c.txt",
        "echo y > top.txt",
    ):
        output = await run(ctx, command)
        assert output.startswith("BLOCKED") and "this task declares no files" in output, (command, output)
    assert (workspace / "a.txt").read_text() == "a\n"
    assert sorted(p.name for p in workspace.iterdir()) == [".pytest_cache", "a.txt"]
    output = await run(ctx, "echo cached > .pytest_cache/v && cat a.txt")
    assert output.endswith("exit code 0"), output
    assert (workspace / ".pytest_cache" / "v").read_text() == "cached\n"
    assert "run commands that write nothing" in ctx.scope.describe() if ctx.scope else False


async def test_a_new_declared_file_is_writable_alone_not_its_folder(workspace: Path, sandbox: BwrapSandbox) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "docs").mkdir()
    ctx = in_task(workspace, sandbox, ["out.txt", "docs/new.md", "new/deeper/made.txt", "never/written.txt"])
    output = await run(ctx, "echo made > out.txt && echo n > docs/new.md && echo m > new/deeper/made.txt")
    assert output.endswith("exit code 0"), output
    assert (workspace / "out.txt").read_text() == "made\n" and (workspace / "new/deeper/made.txt").exists()
    for command in ("echo CMD-LINE >> a.txt", "echo x > docs/other.md", "echo x > new/deeper/other.txt"):
        output = await run(ctx, command)
        assert output.startswith("BLOCKED"), (command, output)
    assert (workspace / "a.txt").read_text() == "a\n"
    assert not (workspace / "never").exists()  # the placeholder and its folders went again, unwritten
    assert sorted(p.name for p in (workspace / "docs").iterdir()) == ["new.md"]
    output = await run(ctx, "touch never/written.txt")  # an empty file the command made stays
    assert output.endswith("exit code 0"), output
    assert (workspace / "never" / "written.txt").is_file()


def test_scope_of_carries_a_command_tasks_files() -> None:
    assert scope_of(command_task(["dist/"])).writable == ("dist/",)
    assert scope_of(command_task(["dist/"], TaskType.VERIFICATION)).writable == ("dist/",)
    assert scope_of(command_task(None)).writable == ()  # declares nothing: writes nothing (in the sandbox)
    assert scope_of(command_task(["."])).writable is None  # `./`: the whole workspace
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
    assert found == [workspace / "app.py", workspace / "new" / "deeper" / "file.py", workspace / "out"]
    assert list(outside.iterdir()) == []


async def test_a_file_replaced_by_renaming_needs_its_folder_declared(workspace: Path, sandbox: BwrapSandbox) -> None:
    """A declared file is bound alone (issue 29's decision, docs/plan-mode.md): a program that writes a
    temporary file beside it and renames it over it cannot; the refusal says to declare the folder. Declared
    as a folder, the same commands work."""
    (workspace / "a.txt").write_text("orig\n")
    (workspace / "b.txt").write_text("b\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "c.txt").write_text("orig\n")
    ctx = in_task(workspace, sandbox, ["a.txt", "new.txt", "docs/"])
    for command in (
        "sed -i s/orig/X/ a.txt",  # an existing declared file
        "sed -i s/orig/X/ new.txt",  # a new one: its placeholder
        "sed -i -e s/orig/X/ ./a.txt",
        "mv b.txt a.txt",  # renamed over from the read-only folder
        "cp a.txt /tmp/x && mv /tmp/x a.txt",  # moved in from elsewhere
    ):
        output = await run(ctx, command)
        assert output.startswith("BLOCKED"), (command, output)
        assert 'needs its folder declared instead ("dir/" in "files")' in output, (command, output)
    assert (workspace / "a.txt").read_text() == "orig\n" and (workspace / "b.txt").read_text() == "b\n"
    assert not (workspace / "new.txt").exists()  # the placeholder went again
    output = await run(ctx, "sed -i s/orig/X/ docs/c.txt && echo appended >> a.txt")
    assert output.endswith("exit code 0"), output
    assert (workspace / "docs" / "c.txt").read_text() == "X\n" and (
        workspace / "a.txt"
    ).read_text() == "orig\nappended\n"
    folders_only = in_task(workspace, sandbox, ["docs/"])
    output = await run(folders_only, "echo x > b.txt")
    assert output.startswith("BLOCKED") and "renames it over" not in output, output


async def test_a_refused_write_of_a_command_that_exits_0_is_pointed_out(workspace: Path, sandbox: BwrapSandbox) -> None:
    """`perl -i` cannot make its temporary file beside a declared file, skips the file and exits 0: the
    result says so, with what to declare, and stays a success (the command did exit 0)."""
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed")
    (workspace / "a.txt").write_text("orig\n")
    ctx = in_task(workspace, sandbox, ["a.txt"])
    output = await run(ctx, "perl -pi -e s/orig/X/ a.txt")
    assert output.endswith("exit code 0") and not output.startswith("BLOCKED"), output
    assert "note: the command exited 0, but its output reports a read-only file system" in output
    assert 'needs its folder declared instead ("dir/" in "files")' in output
    assert (workspace / "a.txt").read_text() == "orig\n"
    output = await run(in_task(workspace, sandbox, ["./"]), "perl -pi -e s/orig/X/ a.txt && cat a.txt")
    assert output == "X\nexit code 0", output  # no note when nothing was refused


def test_a_placeholder_touched_at_once_is_kept(tmp_path: Path) -> None:
    """A `touch` in the same clock tick as the placeholder was made (timestamps are coarse) still counts."""
    path = tmp_path / "made.txt"
    path.touch()
    placeholder = Placeholder.of(path)
    os.utime(path)  # now: what `touch` does
    placeholder.remove_if_unused()
    assert path.exists()
    Placeholder.of(path).remove_if_unused()
    assert not path.exists()
