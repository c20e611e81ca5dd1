"""Commands that overwrite or delete a file undo cannot bring back (git-ignored, or over the checkpoints' 5 MB)
ask in `ask` mode and are refused in `auto`, even in the sandbox, whichever way the file is named (issue 31,
finding 8); the same commands onto files the checkpoints keep still run unasked there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.policy.approval import Decision
from paicli.policy.classify import classify_command
from tests.policy.test_approval import ALWAYS, ScriptedUser
from tests.policy.test_sandbox_policy import contained, decide, policy_for


@pytest.fixture
def files(workspace: Path) -> Path:
    (workspace / ".gitignore").write_text(".env\n*.log\nout/\n")
    (workspace / ".env").write_text("API=1\n")
    (workspace / "run.log").write_text("old run\n")
    (workspace / "notes.txt").write_text("small, not ignored\n")
    (workspace / "my notes.txt").write_text("a name with a space\n")
    (workspace / "data").mkdir()
    (workspace / "data" / "big.bin").write_bytes(b"0" * 6_000_000)
    (workspace / "out").mkdir()
    (workspace / "out" / "report.txt").write_text("built\n")
    (workspace / "conf").mkdir()
    (workspace / "conf" / ".env").write_text("B=2\n")
    os.symlink(".env", workspace / "env-link")
    os.symlink("data", workspace / "data-link")
    return workspace


LOST = [
    "cp notes.txt .env",
    "cp notes.txt '.env'",
    'cp notes.txt ".e"nv',
    "cp -- notes.txt .env",
    "cp -f -- notes.txt ./.env",
    "cp notes.txt ./conf/../.env",
    "cp notes.txt {ws}/.env",
    "cp notes.txt env-link",  # through a symlink: the file it points to is overwritten
    "cp notes.txt data-link/big.bin",
    "cp notes.txt *.log",  # a glob
    "cp -t conf .env",  # conf/.env, ignored
    "cp -tconf .env",
    "cp --target-directory=conf .env",
    "cp --target-directory conf .env",
    "cp -rt conf .env",
    "cp .env conf",  # into a folder: conf/.env
    "cp -fT notes.txt .env",
    "cp notes.txt 'my notes.txt' .env conf",  # several sources into a folder: conf/.env is lost
    "mv notes.txt data/big.bin",
    "mv -t conf .env",
    "install -m 644 notes.txt .env",
    "rsync -a notes.txt .env",
    "rsync --exclude x notes.txt out/report.txt",
    "dd if=/dev/zero of=.env bs=1 count=1",
    "dd of=data/big.bin if=notes.txt",
    "tee .env < notes.txt",
    "echo x | tee notes.txt run.log",
    "truncate -s 0 data/big.bin",
    "rm -f .env",
    "rm -- run.log",
    "shred -u .env",
    "unlink run.log",
    "cd conf && cp ../notes.txt .env",
    "find . -name notes.txt -exec cp {} .env ';'",
    "env cp notes.txt .env",
    "timeout 5 cp notes.txt .env",
    "echo x > .env",
    "echo x > *.log",
]


@pytest.mark.parametrize("command", LOST)
async def test_destroying_a_file_undo_cannot_restore_asks_and_auto_refuses(files: Path, command: str) -> None:
    command = command.replace("{ws}", str(files))
    user = ScriptedUser(ALWAYS)
    ruling = await policy_for(files, "ask").decide("execute_command", {"command": command}, contained(files, user))
    assert ruling.decision is Decision.APPROVED_BY_USER, ruling
    reason = user.asked[0].reason
    assert "undo cannot bring it back" in reason and ("git ignores" in reason or "6.0 MB" in reason), reason
    assert getattr(user.asked[0], "always", "") == "this exact command"
    assert await decide(policy_for(files, "auto"), command, contained(files)) is Decision.REFUSED_BY_POLICY


KEPT = [
    "cp notes.txt notes2.txt",
    "cp .env backup.env",  # copying an ignored file destroys nothing
    "mv run.log conf/",  # conf/run.log does not exist
    "cp -t conf notes.txt",
    "tee -a .env < notes.txt",  # appends
    "echo x >> .env",
    "install -d out/new",
    "rsync -a notes.txt conf",
    "cp notes.txt 'my notes.txt'",
    'cp notes.txt "$TARGET"',  # only known when it runs: not followed (docs/security.md says so)
]


@pytest.mark.parametrize("command", KEPT)
async def test_the_same_programs_onto_files_undo_keeps_run_unasked_in_the_sandbox(files: Path, command: str) -> None:
    assert await decide(policy_for(files, "auto"), command, contained(files)) is Decision.ALLOWED_IN_SANDBOX


def test_the_reason_names_the_program_and_what_it_does(files: Path) -> None:
    assert classify_command("cp notes.txt .env", files).destructive == (
        "cp overwrites .env, which git ignores, so the checkpoints leave it out: undo cannot bring it back"
    )
    assert classify_command("truncate -s0 data/big.bin", files).destructive == (
        "truncate cuts data/big.bin (6.0 MB), too big for the checkpoints: undo cannot bring it back"
    )
    assert classify_command("rm notes.txt", files).destructive == "rm deletes files"  # asks, as it always did
