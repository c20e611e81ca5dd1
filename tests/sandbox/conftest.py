"""A fake home with secrets and a cache, HOME pointing at it, and a tool context whose commands run in
real bubblewrap."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.sandbox import BwrapSandbox
from paicli.tools.base import ToolContext
from tests.sandboxing import bwrap_sandbox


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN FAKE KEY-----\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = fake\n")
    (home / ".netrc").write_text("machine example.com password fake\n")
    (home / ".cache").mkdir()
    (home / "notes.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def sandbox(workspace: Path, fake_home: Path) -> BwrapSandbox:
    return bwrap_sandbox(workspace, fake_home)


@pytest.fixture
def ctx(workspace: Path, sandbox: BwrapSandbox) -> ToolContext:
    return ToolContext(workspace=workspace, sandbox=sandbox, command_timeout=30)
