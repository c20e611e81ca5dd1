"""Where keys live outside the workspace: shell start-up files and histories, `.env`/`.envrc` above the
workspace, and any file in the usual places that holds the session's key are hidden from commands."""

from __future__ import annotations

from pathlib import Path

from paicli.sandbox import BwrapSandbox, choose_sandbox
from paicli.tools.base import ToolContext
from tests.sandbox.test_bwrap import run

KEY = "sk-paicli-test-0123456789abcdefSECRET"


async def test_shell_files_env_files_and_files_holding_the_key_are_hidden(
    workspace: Path, fake_home: Path, tmp_path: Path
) -> None:
    for name in (".bashrc", ".zshrc", ".profile", ".bash_history", ".zsh_history"):
        (fake_home / name).write_text(f"export PAICLI_API_KEY={KEY}\n")
    (fake_home / ".config" / "fish").mkdir(parents=True)
    (fake_home / ".config" / "fish" / "config.fish").write_text(f"set -x KEY {KEY}\n")
    (fake_home / ".config" / "tool").mkdir()
    (fake_home / ".config" / "tool" / "settings.ini").write_text(f"token = {KEY}\n")
    (fake_home / "keys.txt").write_text(f"{KEY}\n")
    (fake_home / "plain.txt").write_text("nothing to see\n")
    (tmp_path / ".env").write_text("OTHER_TOKEN=abc\n")  # above the workspace
    (tmp_path / ".envrc").write_text("export X=1\n")
    (workspace / ".env").write_text("MINE=1\n")  # the workspace's own stays
    choice = choose_sandbox("auto", workspace=workspace, home=fake_home, secrets=[KEY])
    assert isinstance(choice.sandbox, BwrapSandbox), choice.problem
    ctx = ToolContext(workspace=workspace, sandbox=choice.sandbox, command_timeout=30)
    output = await run(
        ctx,
        "cat ~/.bashrc ~/.zshrc ~/.profile ~/.bash_history ~/.zsh_history ~/.config/fish/config.fish "
        f"~/.config/tool/settings.ini ~/keys.txt ../.env ../.envrc 2>&1; cat ~/plain.txt .env; grep -r {KEY[:12]} ~ ..",
    )
    assert KEY not in output and "OTHER_TOKEN" not in output and "export X" not in output, output
    assert "nothing to see" in output and "MINE=1" in output, output
