"""Git-controlled paths in real bubblewrap: every git directory and what the user's own git reads (hooks
folders, include targets, .gitmodules, .gitattributes with a driver) is read-only at any depth, and a
`.git` a command makes where none stood is removed unless the gate keeps it or a plan task named it.
Each attack, if it got through, would leave a marker file the user's git creates on the host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from paicli.sandbox.gitdirs import find_git_paths, git_state
from paicli.tools.base import ToolContext
from paicli.tools.effect import Effect
from paicli.tools.git_added import settle_now
from paicli.tools.task_scope import TaskScope
from tests.repos import git_init
from tests.sandbox.test_bwrap import run

PLANT = (
    "mkdir -p {d}/objects {d}/refs && printf 'ref: refs/heads/main\\n' > {d}/HEAD"
    " && printf '[core]\\n\\tfsmonitor = \"touch PWNED\"\\n' > {d}/config"
)


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def repo(workspace: Path) -> Path:
    git_init(workspace)
    (workspace / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./elsewhere\n')
    (workspace / "sub").mkdir()  # an uninitialised submodule: its folder, empty
    return workspace


async def test_a_git_dir_planted_in_an_uninitialised_submodule_is_removed(ctx: ToolContext, repo: Path) -> None:
    output = await run(ctx, PLANT.format(d="sub/.git") + " && ls sub/.git")
    assert "exit code 0" in output and "[sandbox] removed sub/.git" in output, output
    assert not os.path.lexists(repo / "sub" / ".git")
    git("status", cwd=repo / "sub")
    assert not (repo / "sub" / "PWNED").exists()


async def test_git_init_in_a_workspace_without_git_is_removed(ctx: ToolContext, workspace: Path) -> None:
    output = await run(ctx, "git init -q . && echo made")
    assert "made" in output and "[sandbox] removed .git" in output, output
    assert not os.path.lexists(workspace / ".git")


async def test_what_is_removed_is_told_to_the_user_in_one_line(ctx: ToolContext, workspace: Path) -> None:
    told: list[str] = []
    seen = ToolContext(workspace=workspace, sandbox=ctx.sandbox, command_timeout=30, notice=told.append)
    names = "\"$(printf 'x\\ny')\" c1 c2 c3"  # one folder's name holds a newline
    output = await run(seen, f'for d in {names}; do git init -q "$d"; done; echo done')
    assert "done" in output and "[sandbox] removed" in output, output
    [notice] = told
    assert "\n" not in notice and "removed" in notice and "x ⏎ y/.git" in notice and "and 1 more" in notice, notice
    assert not any(os.path.lexists(workspace / d / ".git") for d in ("x\ny", "c1", "c2", "c3"))


async def test_nothing_is_told_when_nothing_was_removed(ctx: ToolContext, workspace: Path) -> None:
    told: list[str] = []

    async def keep(paths: list[str]) -> bool:
        return True

    kept = ToolContext(
        workspace=workspace, sandbox=ctx.sandbox, command_timeout=30, keep_added=keep, notice=told.append
    )
    await run(kept, "git init -q nested && mkdir plain")
    assert told == [] and (workspace / "nested" / ".git").is_dir()


def test_a_cancelled_command_s_git_dir_is_removed_and_told(workspace: Path) -> None:
    told: list[str] = []
    before = git_state(workspace)
    git_init(workspace / "late")
    ctx = ToolContext(workspace=workspace, notice=told.append)
    assert "removed late/.git" in settle_now(before, ctx)
    assert len(told) == 1 and "late/.git" in told[0] and not (workspace / "late" / ".git").exists()


async def test_the_gate_may_keep_a_new_git_dir(ctx: ToolContext, workspace: Path) -> None:
    asked: list[list[str]] = []

    async def keep(paths: list[str]) -> bool:
        asked.append(paths)
        return True

    kept = ToolContext(workspace=workspace, sandbox=ctx.sandbox, command_timeout=30, keep_added=keep)
    output = await run(kept, "git init -q nested")
    assert asked == [["nested/.git"]] and "[sandbox] kept nested/.git" in output, output
    assert (workspace / "nested" / ".git" / "HEAD").is_file()


async def test_a_plan_task_that_named_the_git_dir_keeps_it(ctx: ToolContext, workspace: Path) -> None:
    scope = TaskScope("task_1", "COMMAND", frozenset({Effect.READ, Effect.EXECUTE}), ("lib/", "lib/.git"))
    scoped = ToolContext(workspace=workspace, sandbox=ctx.sandbox, command_timeout=30, scope=scope)
    output = await run(scoped, "git init -q lib && echo ok")
    assert "removed" not in output and (workspace / "lib" / ".git").is_dir(), output


async def test_moving_a_repository_away_and_planting_one_in_its_place_is_seen(
    ctx: ToolContext, workspace: Path
) -> None:
    git_init(workspace / "sub")
    output = await run(ctx, "mv sub moved && mkdir sub && " + PLANT.format(d="sub/.git") + " && echo done")
    assert "done" in output and "removed" in output and "sub/.git" in output, output
    assert not os.path.lexists(workspace / "sub" / ".git")
    assert (workspace / "moved" / ".git" / "HEAD").is_file()  # the user's repository, moved, is kept


async def test_nested_repositories_are_read_only_at_any_depth(ctx: ToolContext, workspace: Path) -> None:
    nested = git_init(workspace / "a" / "b" / "nested")
    config = (nested / ".git" / "config").read_text()
    output = await run(
        ctx, "echo '[core] fsmonitor = x' >> a/b/nested/.git/config; touch a/b/nested/.git/hooks/pre-commit; rm -rf a"
    )
    assert "Read-only file system" in output or "busy" in output, output
    assert (nested / ".git" / "config").read_text() == config
    assert not (nested / ".git" / "hooks" / "pre-commit").exists()


async def test_a_git_file_pointing_into_the_workspace_protects_its_target(ctx: ToolContext, workspace: Path) -> None:
    real = git_init(workspace / "store")
    os.rename(real / ".git", workspace / "store.git")
    (real / ".git").write_text("gitdir: ../store.git\n")
    output = await run(ctx, "echo x > store.git/config; echo 'gitdir: /tmp/x' > store/.git")
    assert output.count("Read-only file system") == 2, output
    assert "fsmonitor" not in (workspace / "store.git" / "config").read_text()


async def test_hooks_folders_and_include_targets_are_read_only(ctx: ToolContext, workspace: Path) -> None:
    git_init(workspace)
    (workspace / ".githooks").mkdir()
    (workspace / "shared.gitconfig").write_text("[user]\n\tname = me\n")
    git("config", "core.hooksPath", ".githooks", cwd=workspace)
    git("config", "include.path", "../shared.gitconfig", cwd=workspace)
    output = await run(
        ctx, "echo 'touch PWNED' > .githooks/pre-commit; echo '[core] fsmonitor = x' >> shared.gitconfig; echo ok"
    )
    assert output.count("Read-only file system") == 2, output
    assert not (workspace / ".githooks" / "pre-commit").exists()
    assert "fsmonitor" not in (workspace / "shared.gitconfig").read_text()


async def test_a_hooks_folder_named_by_the_global_config_is_removed_when_made(
    ctx: ToolContext, workspace: Path, fake_home: Path
) -> None:
    git_init(workspace)
    (fake_home / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    output = await run(ctx, "mkdir .githooks && printf '#!/bin/sh\\ntouch PWNED\\n' > .githooks/pre-commit")
    assert "[sandbox] removed .githooks" in output, output
    assert not (workspace / ".githooks").exists()


async def test_gitmodules_always_and_gitattributes_with_a_driver_are_read_only(
    ctx: ToolContext, workspace: Path
) -> None:
    git_init(workspace)
    (workspace / ".gitmodules").write_text("")
    (workspace / "src").mkdir()
    (workspace / "src" / ".gitattributes").write_text("")
    output = await run(ctx, "echo x >> src/.gitattributes && echo attributes-ok; echo x >> .gitmodules")
    assert "attributes-ok" in output and "Read-only file system" in output, output
    git("config", "filter.lfs.clean", "git-lfs clean -- %f", cwd=workspace)
    output = await run(ctx, "echo '* filter=lfs' >> src/.gitattributes")
    assert "Read-only file system" in output, output
    assert "filter" not in (workspace / "src" / ".gitattributes").read_text()


async def test_a_plan_task_that_named_the_hooks_folder_may_write_it(ctx: ToolContext, workspace: Path) -> None:
    git_init(workspace)
    (workspace / ".githooks").mkdir()
    git("config", "core.hooksPath", ".githooks", cwd=workspace)
    scope = TaskScope("task_1", "COMMAND", frozenset({Effect.READ, Effect.EXECUTE}), (".githooks/",))
    scoped = ToolContext(workspace=workspace, sandbox=ctx.sandbox, command_timeout=30, scope=scope)
    output = await run(scoped, "echo hook > .githooks/pre-commit && echo ok")
    assert "ok" in output and (workspace / ".githooks" / "pre-commit").exists(), output


def test_find_git_paths_does_not_follow_symlinks_out(workspace: Path, tmp_path: Path) -> None:
    outside = git_init(tmp_path / "outside")
    os.symlink(outside, workspace / "link")
    git_init(workspace / "in")
    found = find_git_paths(workspace)
    assert found.git_dirs == (Path(os.path.realpath(workspace / "in" / ".git")),)


def test_a_hooks_folder_or_driver_set_in_an_included_file_counts(workspace: Path) -> None:
    """`include.path = ../.gitconfig` makes a tracked file part of the config: what it sets is found too."""
    git_init(workspace)
    subprocess.run(["git", "config", "include.path", "../.gitconfig"], cwd=workspace, check=True)
    (workspace / ".gitconfig").write_text("[core]\n\thooksPath = .sneaky\n[include]\n\tpath = more.cfg\n")
    (workspace / "more.cfg").write_text('[diff "x"]\n\ttextconv = cat\n')
    (workspace / "src").mkdir()
    (workspace / "src" / ".gitattributes").write_text("*.py diff=x\n")
    found = find_git_paths(workspace)
    root = Path(os.path.realpath(workspace))
    assert {root / ".gitconfig", root / "more.cfg", root / ".sneaky", root / "src" / ".gitattributes"} <= set(
        found.controlled
    )
    assert found.drivers
