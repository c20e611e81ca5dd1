"""File tools on git-controlled paths: they ask in every mode (yolo too), are refused where nobody can be
asked, and run unasked only for a plan task that named the path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.policy.approval import ApprovalPolicy, Decision, Mode
from paicli.policy.git_guard import GitPathsMemo
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


# ---- the walk is remembered between plain file writes, never across what may change it ----


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def remembering(workspace: Path, clock: Clock) -> tuple[ApprovalPolicy, ToolContext, ScriptedUser]:
    policy = policy_for(workspace, "yolo")
    policy.git_paths = GitPathsMemo(workspace, clock=clock)
    user = ScriptedUser(*[YES] * 10)
    return policy, ToolContext(workspace, approve=user), user


async def decide_write(policy: ApprovalPolicy, path: str, ctx: ToolContext) -> Decision:
    return (await policy.decide("write_file", {"path": path, "content": "x"}, ctx)).decision


async def test_many_plain_writes_walk_the_workspace_once(workspace: Path) -> None:
    policy, ctx, user = remembering(workspace, Clock())
    for i in range(50):
        assert await decide_write(policy, f"src/f{i}.py", ctx) is Decision.ALLOWED
        await policy.decide("read_file", {"path": "README.md"}, ctx)  # reads change nothing git reads
    assert policy.git_paths.walks == 1 and user.asked == []


async def test_a_command_in_between_makes_the_next_write_walk_again(workspace: Path) -> None:
    policy, ctx, _ = remembering(workspace, Clock())
    assert await decide_write(policy, "src/.gitattributes", ctx) is Decision.ALLOWED
    await policy.decide("execute_command", {"command": "git config diff.x.textconv cat"}, ctx)
    subprocess.run(["git", "config", "diff.x.textconv", "cat"], cwd=workspace, check=True)  # what it ran
    assert await decide_write(policy, "src/.gitattributes", ctx) is Decision.APPROVED_BY_USER
    assert policy.git_paths.walks == 2


async def test_a_write_to_a_git_controlled_file_makes_the_next_write_walk_again(workspace: Path) -> None:
    """An include target written (asked, approved) may now name a hooks folder: the next write sees it."""
    subprocess.run(["git", "config", "include.path", "../shared.cfg"], cwd=workspace, check=True)
    policy, ctx, user = remembering(workspace, Clock())
    assert await decide_write(policy, "shared.cfg", ctx) is Decision.APPROVED_BY_USER
    (workspace / "shared.cfg").write_text("[core]\n\thooksPath = .sneaky\n")  # what the write put there
    assert await decide_write(policy, ".sneaky/pre-commit", ctx) is Decision.APPROVED_BY_USER
    assert len(user.asked) == 2 and "read by git" in user.asked[1].reason


async def test_what_the_user_changes_outside_counts_after_a_second(workspace: Path) -> None:
    clock = Clock()
    policy, ctx, _ = remembering(workspace, clock)
    assert await decide_write(policy, "tools/hook", ctx) is Decision.ALLOWED
    subprocess.run(["git", "config", "core.hooksPath", "tools"], cwd=workspace, check=True)
    clock.now += 1.0
    assert await decide_write(policy, "tools/hook", ctx) is Decision.APPROVED_BY_USER
