"""What a tool result looks like in a few lines: per tool, the part a user wants to see first."""

from __future__ import annotations

from paicli.ui.chat.preview import Preview, result_preview


def test_a_failing_command_shows_its_exit_code_and_the_error_it_printed() -> None:
    error = "ls: cannot access 'nonexistent_dir': No such file or directory"
    output = error + "\nexit code 2"
    assert result_preview("execute_command", True, output) == Preview("exit code 2 · 1 line", [error], failed=True)


def test_a_long_command_output_shows_its_first_and_last_lines() -> None:
    output = "\n".join(f"line {n}" for n in range(1, 51)) + "\nexit code 0"
    preview = result_preview("execute_command", True, output)
    assert preview.headline == "50 lines" and not preview.failed
    assert preview.head == ["line 1", "line 2", "line 3", "line 4"]
    assert (preview.hidden, preview.tail) == (44, ["line 49", "line 50"])


def test_a_silent_command_and_a_killed_one() -> None:
    assert result_preview("execute_command", True, "(no output)\nexit code 0").headline == "no output"
    killed = result_preview("execute_command", True, "(no output)\nexit code 137 (killed by SIGKILL)")
    assert killed.headline == "exit code 137 (killed by SIGKILL) · no output" and killed.failed


def test_grep_shows_its_matches_and_read_file_the_lines_read() -> None:
    grep = "a.py:3: # TODO x\nb.py:10: # TODO y"
    assert result_preview("grep_code", True, grep) == Preview("2 matches", ["a.py:3: # TODO x", "b.py:10: # TODO y"])
    assert result_preview("grep_code", True, "no matches for 'zzz' in .").headline == "no matches for 'zzz' in ."
    read = "     7\tdef add(a, b):\n     8\t    return a + b"
    assert result_preview("read_file", True, read) == Preview("lines 7–8")
    more = read + "\n... file has 1200 lines; use offset=9 to read more"
    assert result_preview("read_file", True, more).headline == "lines 7–8 of 1,200"
    capped = read + "\n... output capped; showing lines 7-8 of 90; use offset=9 to read more"
    assert result_preview("read_file", True, capped).headline == "lines 7–8 of 90"


def test_listings_count_entries_and_writes_keep_their_sentence() -> None:
    assert result_preview("list_dir", True, "a.py\nsrc/").headline == "2 entries"
    assert result_preview("edit_file", True, "edited a.py: replaced 1 line with 2 lines") == Preview(
        "edited a.py: replaced 1 line with 2 lines"
    )


def test_an_error_shows_its_first_line_as_headline_and_the_rest_below() -> None:
    preview = result_preview("execute_command", False, "Error: timed out after 5 s; output so far:\nstep 1\nstep 2")
    assert preview == Preview("Error: timed out after 5 s; output so far:", ["step 1", "step 2"], failed=True)
    assert result_preview("read_file", False, "\nrefused: outside").headline == "Error: refused: outside"


def test_control_characters_never_reach_the_preview() -> None:
    preview = result_preview("execute_command", True, "\x1b[2Jboom\nexit code 0")
    assert preview.head == ["\\x1b[2Jboom"]
