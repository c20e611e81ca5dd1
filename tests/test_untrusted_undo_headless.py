"""A repository's own config cannot take undo away (issue 27, finding 3): real paicli processes against
the fake server, in a workspace whose untrusted .paicli/config.toml turns checkpoints off."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.trust import TrustStore
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result


@pytest.mark.parametrize("off", ["checkpoints = false", 'checkpoints = "off"\ncheckpoints_keep = 1'])
def test_an_untrusted_checkpoints_off_is_ignored_and_undo_takes_the_turn_back(
    fake: FakeLLM, workspace: Path, home: Path, off: str
) -> None:
    (workspace / ".paicli").mkdir()
    (workspace / ".paicli" / "config.toml").write_text(off + "\n")
    (workspace / "notes.txt").write_text("mine\n")
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."))
    fake.on("write the notes", Reply.tool_calls([("write_file", {"path": "notes.txt", "content": "theirs\n"})]))
    env = paicli_env(fake, home)

    done = run_paicli(["-C", str(workspace), "run", "write the notes", "--json"], env)
    assert done.code == 0, done.stderr
    assert "ignoring checkpoints = " in done.stderr and "takes your trust" in done.stderr
    assert (workspace / "notes.txt").read_text() == "theirs\n"
    (finished,) = done.of("run_finished")
    assert [change["path"] for change in finished["changes"]] == ["notes.txt"]

    undone = run_paicli(["-C", str(workspace), "undo"], env)
    assert undone.code == 0, undone.stderr
    assert (workspace / "notes.txt").read_text() == "mine\n"


def test_trusted_the_same_config_turns_checkpoints_off(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """The other side: once the user trusts the file, its `checkpoints = false` applies (nothing to undo)."""
    (workspace / ".paicli").mkdir()
    (workspace / ".paicli" / "config.toml").write_text("checkpoints = false\n")
    assert TrustStore(home).trust_current(workspace, ".paicli/config.toml")
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."))
    fake.on("write the notes", Reply.tool_calls([("write_file", {"path": "notes.txt", "content": "theirs\n"})]))
    env = paicli_env(fake, home)
    done = run_paicli(["-C", str(workspace), "run", "write the notes", "--json"], env)
    assert done.code == 0, done.stderr
    assert "ignoring" not in done.stderr and "changes" not in done.of("run_finished")[0]
    nothing = run_paicli(["-C", str(workspace), "undo"], env)
    assert nothing.code == 1 and "nothing to undo" in nothing.stderr
