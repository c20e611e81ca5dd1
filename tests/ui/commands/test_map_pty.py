"""`/map QUERY` in the REPL, through a real pseudo-terminal: the map for the query, then its figures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.repomap.maprepo import make_repo
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"


def test_map_shows_the_files_for_the_query(spawn_repl: Spawn, workspace: Path) -> None:
    shutil.rmtree(workspace)
    make_repo(workspace)
    child = spawn_repl(env={"PAGER": "cat"})
    child.send("/map refund in payments.py" + ENTER)
    expect_text(child, "## Named in the goal")
    expect_text(child, "src/shop/payments.py")
    expect_text(child, "class PaymentGateway")
    expect_text(child, "map tokens")
    child.expect_exact(PROMPT)
    assert "generated_cart" not in child.before
