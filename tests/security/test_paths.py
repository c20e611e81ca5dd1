"""Paths the model may try, through the real tool box (read and write), in yolo mode: the workspace guard
holds whatever the approval mode. Unit tests of the guard itself: tests/tools/test_guard.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.security.conftest import Session


@pytest.fixture
def session(session_factory: Any, workspace: Path, tmp_path: Path) -> Session:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret\n")
    (tmp_path / "ws-evil").mkdir()  # a sibling whose name starts like the workspace's
    (tmp_path / "ws-evil" / "x.txt").write_text("sibling\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("inside\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    os.symlink(tmp_path / "outside" / "secret.txt", workspace / "link-file")
    os.symlink(tmp_path / "outside", workspace / "link-folder")
    os.symlink(tmp_path / "outside" / "not-yet.txt", workspace / "dangling")
    os.symlink(workspace / "src", workspace / "link-inside")
    return session_factory("yolo")  # type: ignore[no-any-return]


OUTSIDE = [
    "../x",
    "a/../../x",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "$HOME/x",
    "${HOME}/x",
    "../ws-evil/x.txt",
    "link-file",
    "link-folder/secret.txt",
    "dangling",
    "",
    "   ",
    "a\x00b",
    "x" * 300,
]


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: repr(p)[:30])
async def test_reads_outside_or_malformed_are_refused(session: Session, path: str) -> None:
    outcome = await session.call("read_file", path=path)
    assert not outcome.ok and outcome.output.startswith("Error: refused"), outcome.output
    assert "outside secret" not in outcome.output and "sibling" not in outcome.output


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: repr(p)[:30])
async def test_writes_outside_or_malformed_are_refused_and_change_nothing(
    session: Session, path: str, tmp_path: Path
) -> None:
    before = sorted(str(p) for p in tmp_path.rglob("*") if "audit" not in p.parts)
    outcome = await session.call("write_file", path=path, content="pwned")
    assert not outcome.ok and outcome.output.startswith("Error: refused"), outcome.output
    assert (tmp_path / "outside" / "secret.txt").read_text() == "outside secret\n"
    assert not (tmp_path / "outside" / "not-yet.txt").exists()
    assert sorted(str(p) for p in tmp_path.rglob("*") if "audit" not in p.parts) == before


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".GIT/config",
        ".paicli/config.toml",
        ".paicli/prompts/system.md",
        "src/../.git/HEAD",
    ],
)
async def test_protected_folders_are_not_writable_even_before_they_exist(session: Session, path: str) -> None:
    outcome = await session.call("write_file", path=path, content="[core]\n\thooksPath = /tmp/evil\n")
    assert not outcome.ok and "protected" in outcome.output
    edit = await session.call("edit_file", path=".git/config", old_text="[core]", new_text="[evil]")
    assert not edit.ok and "protected" in edit.output
    assert (session.workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (session.workspace / ".paicli").exists()


async def test_allowed_paths_work(session: Session) -> None:
    assert (await session.call("read_file", path="link-inside/a.py")).ok
    assert (await session.call("read_file", path=str(session.workspace / "src" / "a.py"))).ok
    assert (await session.call("read_file", path=".git/config")).ok  # protected only for writes
    created = await session.call("write_file", path="new/deeper/file.txt", content="hi\n")
    assert created.ok and (session.workspace / "new" / "deeper" / "file.txt").read_text() == "hi\n"
    through_link = await session.call("write_file", path="link-inside/b.py", content="b\n")
    assert through_link.ok and (session.workspace / "src" / "b.py").read_text() == "b\n"


async def test_commands_reading_outside_need_approval(session: Session, session_factory: Any) -> None:
    session = session_factory("auto")  # the same workspace, links and all, in auto mode
    for command in ["cat ../outside/secret.txt", "cat link-file", "cat link-folder/*", "cat ~/.ssh/id_rsa"]:
        outcome = await session.run(command)
        assert not outcome.ok and "outside secret" not in outcome.output, command
