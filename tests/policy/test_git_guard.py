"""File tools on git-controlled paths: they ask in every mode (yolo too), are refused where nobody can be
asked, and run unasked only for a plan task that named the path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.policy.approval import Decision, Mode
from paicli.tools.base import ToolContext
from paicli.tools.effect import Effect
from paicli.tools.task_scope import TaskScope
from tests.policy.test_approval import YES, ScriptedUser, policy_for
from tests.repos import git_init


async def write(mode: Mode, workspace: Path, path: str, ctx: ToolContext) -> Decision:
    ruling = await policy_for(workspace, mode).decide("write_file", {"path": path, "content": "x"}, ctx)
    return ruling.decision


@pytest.mark.parametrize("mode", ["ask", "yolo"])
@pytest.mark.parametrize("path", [".gitmodules", "deep/er/.gitmodules", ".githooks/pre-commit", "shared.cfg"])
async def test_a_write_to_a_git_controlled_path_asks_in_every_mode(workspace: Path, mode: Mode, path: str) -> None:
    subprocess.run(["git", "config", "core.hooksPath", ".githooks"], cwd=workspace, check=True)
    subprocess.run(["git", "config", "include.path", "../shared.cfg"], cwd=workspace, check=True)
    user = ScriptedUser(YES)
    decision = await write(mode, workspace, path, ToolContext(workspace, approve=user))
    assert decision is Decision.APPROVED_BY_USER and len(user.asked) == 1
    assert "read by git" in user.asked[0].reason


async def test_gitattributes_asks_only_where_a_driver_is_configured(workspace: Path) -> None:
    user = ScriptedUser(YES)
    ctx = ToolContext(workspace, approve=user)
    assert await write("yolo", workspace, "src/.gitattributes", ctx) is Decision.ALLOWED
    subprocess.run(["git", "config", "diff.x.textconv", "cat"], cwd=workspace, check=True)
    assert await write("yolo", workspace, "src/.gitattributes", ctx) is Decision.APPROVED_BY_USER


async def test_nested_repositories_hooks_folder_asks(workspace: Path) -> None:
    nested = git_init(workspace / "vendor" / "lib")
    subprocess.run(["git", "config", "core.hooksPath", "hooks"], cwd=nested, check=True)
    user = ScriptedUser()
    assert await write("yolo", workspace, "vendor/lib/hooks/post-checkout", ToolContext(workspace, approve=user)) is (
        Decision.REFUSED_BY_USER
    )


async def test_refused_where_nobody_can_be_asked(workspace: Path) -> None:
    assert await write("auto", workspace, ".gitmodules", ToolContext(workspace)) is Decision.REFUSED_BY_POLICY
    assert await write("yolo", workspace, ".gitmodules", ToolContext(workspace)) is Decision.REFUSED_BY_POLICY


async def test_a_plan_task_that_named_it_writes_unasked(workspace: Path) -> None:
    scope = TaskScope("task_1", "FILE_WRITE", frozenset({Effect.READ, Effect.WRITE}), (".gitmodules", "src/"))
    assert await write("auto", workspace, ".gitmodules", ToolContext(workspace, scope=scope)) is Decision.ALLOWED
    assert await write("auto", workspace, "src/a.py", ToolContext(workspace, scope=scope)) is Decision.ALLOWED


async def test_ordinary_files_do_not_ask(workspace: Path) -> None:
    assert await write("auto", workspace, "src/gitmodules.py", ToolContext(workspace)) is Decision.ALLOWED
