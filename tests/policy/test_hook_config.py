"""`[hooks]` in the config files (issue 35): the user's apply, a repository's only once trusted (the
question shows every command), the lists add up, bad entries are configuration errors; and a hook runs in
the sandbox unless it says otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.common.events import ListSink
from paicli.config_sources import load_settings
from paicli.policy.hook_config import HookConfig, HooksConfig
from paicli.policy.hooks import Hooks, run_hook
from paicli.tools.base import ToolContext
from paicli.trust import TrustRequest
from tests.sandboxing import bwrap_sandbox

USER = '[[hooks.before_tool]]\ncommand = "mine.sh"\n[[hooks.turn_end]]\ncommand = "notify-send done"\n'
REPO = (
    '[[hooks.before_tool]]\ncommand = "scripts/guard.sh"\ntools = ["execute_command"]\n'
    '[[hooks.after_tool]]\ncommand = "make fmt"\nsandbox = false\n'
)


def files(tmp_path: Path, user: str, repo: str) -> tuple[Path, Path]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "config.toml").write_text(user)
    (workspace / ".paicli").mkdir(parents=True)
    (workspace / ".paicli" / "config.toml").write_text(repo)
    return home, workspace


def test_a_repositorys_hooks_are_ignored_until_trusted(tmp_path: Path) -> None:
    home, workspace = files(tmp_path, USER, REPO)
    warnings: list[str] = []
    settings = load_settings(workspace=workspace, env={}, home=home, warn=warnings.append)
    assert [hook.command for hook in settings.hooks.before_tool] == ["mine.sh"]
    assert any(w.startswith("ignoring hooks from") for w in warnings), warnings


def test_trusted_the_lists_add_up_and_the_question_shows_every_command(tmp_path: Path) -> None:
    home, workspace = files(tmp_path, USER, REPO)
    asked: list[TrustRequest] = []
    settings = load_settings(
        workspace=workspace, env={}, home=home, warn=lambda _: None, confirm_trust=lambda r: not asked.append(r)
    )
    assert asked[0].values["hooks"] == "before_tool: scripts/guard.sh; after_tool: make fmt (outside the sandbox)"
    assert [hook.command for hook in settings.hooks.before_tool] == ["mine.sh", "scripts/guard.sh"]
    assert settings.hooks.before_tool[1].tools == ["execute_command"]
    assert [hook.command for hook in settings.hooks.turn_end] == ["notify-send done"]


@pytest.mark.parametrize(
    "entry",
    ['[[hooks.before_tool]]\ncommand = ""\n', '[[hooks.before_tool]]\ncommand = "x"\ntimeout = 0\n',
     '[[hooks.before_tool]]\ncommand = "x"\nrun_as = "root"\n', '[[hooks.on_start]]\ncommand = "x"\n',
     'hooks = "everything"\n'],
)  # fmt: skip
def test_a_bad_hook_is_a_configuration_error(tmp_path: Path, entry: str) -> None:
    home, workspace = files(tmp_path, entry, "")
    with pytest.raises(ConfigError, match="invalid setting hooks"):
        load_settings(workspace=workspace, env={}, home=home, warn=lambda _: None)


async def test_a_hook_runs_in_the_sandbox_unless_it_says_otherwise(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    sandbox = bwrap_sandbox(workspace, tmp_path / "home")
    ctx = ToolContext(workspace=workspace, sandbox=sandbox)
    command = f"echo inside > in.txt; echo outside > {outside / 'out.txt'}"
    contained = await run_hook(HookConfig(command=command), "turn_end", {"event": "turn_end"}, ctx)
    assert contained.code != 0 and (workspace / "in.txt").exists() and not (outside / "out.txt").exists()
    free = await run_hook(HookConfig(command=command, sandbox=False), "turn_end", {"event": "turn_end"}, ctx)
    assert free.code == 0 and (outside / "out.txt").read_text() == "outside\n"


async def test_a_hook_that_prints_without_end_is_capped_and_its_json_read(tmp_path: Path) -> None:
    script = "import sys, json; sys.stdout.write('x' * 10_000_000)"
    ctx = ToolContext(workspace=tmp_path, sink=ListSink())
    done = await run_hook(HookConfig(command=f'{sys.executable} -c "{script}"'), "turn_end", {}, ctx)
    assert done.code == 0 and len(done.stdout) == 64 * 1024
    answer = await Hooks(HooksConfig(before_tool=[HookConfig(command='echo \'{"decision": "maybe"}\'')])).before_tool(
        "read_file", {}, ctx
    )
    assert answer is None  # an unknown decision is no decision
