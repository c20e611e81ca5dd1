"""Counts are worded for people: `1 line`, `2 lines`, never `line(s)` (issue 32)."""

from __future__ import annotations

from paicli.common.wording import counted
from paicli.tools.builtin.execute_command import ExecuteCommand


def test_a_count_takes_the_right_form_of_its_noun() -> None:
    assert counted(1, "line") == "1 line"
    assert counted(0, "line") == "0 lines"
    assert counted(1200, "file") == "1,200 files"
    assert counted(2, "entry", "entries") == "2 entries"


def test_a_failed_command_is_said_in_words() -> None:
    tool = ExecuteCommand()
    assert tool.failure("boom\nexit code 1") == "it exited with code 1"
    assert tool.failure("(no output)\nexit code 137 (killed by SIGKILL)") == "it was killed by SIGKILL"
    assert tool.failure("fine\nexit code 0") is None
    assert tool.failure("exit code 1 was printed, then\nexit code 0") is None  # only the tool's own last line
