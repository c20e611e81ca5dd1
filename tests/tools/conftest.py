"""Shared fixtures for the tool tests: a real workspace folder in tmp_path and a context on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.tools.base import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)
