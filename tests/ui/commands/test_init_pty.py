"""`/init` through a real pseudo-terminal: a read-only turn drafts PAI.md, shown as a diff, written only
after a yes; an existing PAI.md is replaced only after a yes."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
INIT = "write PAI.md for this repository"  # words of prompts/modes/init.md
DRAFT = "# Rules\n\n## Test\n\n`pytest -q`\n\n## Style\n\n`ruff check .`"


def script_init(fake: FakeLLM) -> None:
    """The model first tries to write (refused: /init only reads), then reads, then answers in a fence."""
    fake.on(all_of(INIT, has_tool_result("read_file")), Reply.text("```markdown\n" + DRAFT + "\n```"))
    fake.on(all_of(INIT, has_tool_result("write_file")), Reply.tool_calls([("read_file", {"path": "pyproject.toml"})]))
    fake.on(INIT, Reply.tool_calls([("write_file", {"path": "PAI.md", "content": "sneaky"})]))


def start_init(spawn_repl: Spawn, workspace: Path) -> pexpect.spawn:
    (workspace / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    child = spawn_repl()
    child.send("/init" + ENTER)
    expect_text(child, "read_file")  # its tool lines show
    return child


def test_init_shows_the_draft_as_a_diff_and_writes_it_after_a_yes(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    script_init(fake)
    child = start_init(spawn_repl, workspace)
    expect_text(child, "+## Test")
    expect_text(child, "+`pytest -q`")
    expect_text(child, "Write PAI.md? [y/N]")
    child.send("y" + ENTER)
    expect_text(child, "PAI.md written")
    child.expect_exact(PROMPT)
    assert (workspace / "PAI.md").read_text() == DRAFT + "\n"  # the fence is not part of the file
    refused = next(m for m in fake.requests[1].messages if m["role"] == "tool")
    assert "out of scope" in refused["content"]  # the write the model tried never ran
    assert fake.requests[0].body is not None and fake.requests[0].body["messages"][0]["role"] == "system"


def test_init_writes_nothing_after_a_no(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    script_init(fake)
    child = start_init(spawn_repl, workspace)
    expect_text(child, "Write PAI.md? [y/N]")
    child.send("n" + ENTER)
    expect_text(child, "PAI.md not written")
    child.expect_exact(PROMPT)
    assert not (workspace / "PAI.md").exists()


def test_init_replaces_an_existing_pai_md_only_after_a_yes(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    (workspace / "PAI.md").write_text("# Rules\n\nUse tabs.\n")
    script_init(fake)
    fake.on("after", Reply.text("Fine."))
    child = start_init(spawn_repl, workspace)
    expect_text(child, "-Use tabs.")
    expect_text(child, "Replace the existing PAI.md with this? [y/N]")
    child.send(ENTER)  # no answer is a no
    expect_text(child, "PAI.md not written")
    child.expect_exact(PROMPT)
    assert (workspace / "PAI.md").read_text() == "# Rules\n\nUse tabs.\n"
    assert "Use tabs." in fake.requests[0].messages[0]["content"]  # the model saw the existing rules
    child.send("after" + ENTER)
    expect_text(child, "Fine.")
    assert [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"] == ["after"]  # not in the chat
