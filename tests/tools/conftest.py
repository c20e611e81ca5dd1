"""Shared fixture for the tool tests: a context on the real workspace folder of tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.tools.base import ToolContext


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)
