"""The pieces of `/init`: the answer made a file, and the diff shown for approval."""

from __future__ import annotations

from paicli.ui.commands.init_command import drafted_text, file_diff


def test_a_fence_around_the_whole_answer_is_not_part_of_the_file() -> None:
    assert drafted_text("```markdown\n# Rules\n\n`make test`\n```\n") == "# Rules\n\n`make test`\n"
    assert drafted_text("# Rules\n\n```sh\nmake\n```") == "# Rules\n\n```sh\nmake\n```\n"  # a fence inside stays
    assert drafted_text("  \n") == ""


def test_the_diff_shows_a_new_file_against_nothing_and_a_change_against_the_old_text() -> None:
    new = file_diff(None, "# Rules\n")
    assert new.splitlines()[:2] == ["--- /dev/null", "+++ b/PAI.md"] and "+# Rules" in new
    changed = file_diff("# Rules\nUse tabs.\n", "# Rules\nUse spaces.")
    assert "-Use tabs." in changed and "+Use spaces." in changed and changed.endswith("\n")
