"""Fixtures for the policy tests: a real workspace folder in tmp_path, holding its own git repository
(paicli counts git as read-only only there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.repos import git_init


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return git_init(tmp_path / "ws")
