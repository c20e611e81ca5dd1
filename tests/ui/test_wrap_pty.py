"""No word is cut at the terminal's edge (issue 32, item 3), at 40, 70, 120 and 200 columns, through a terminal
emulator: the review keys, the live plan above an approval, the approval box (its border on every row), the
final table, the Changed line, and a command's output lines. Text wraps at spaces; a line that must stay
one row is cut at a space with `…`. One session per width sees every screen."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result, last_message_contains
from tests.plan_script import PLANNER, script_summary, system_is, task_is
from tests.ui.terminal import Terminal

pytestmark = pytest.mark.pty

ENTER = "\r"
NOTES = "this line of the notes is long enough to pass the edge of any terminal narrower than two hundred columns " * 2
WROTE = "wrote 70 bytes to docs/USAGE.md (created)"
HINT = "Enter approve · i add to the plan · e edit · Ctrl+O expand · Esc cancel"
CHANGED = "Changed: docs/USAGE.md +10 −0 (task_3) · stale.txt +0 −1 deleted (task_4) · /undo to revert"
FOOTER = "y yes · n no · a always allow this exact command this session · esc cancel"
SUMMARY = "The usage page is written, the stale file removed and every option of the tool explained in its own words."


def script(fake: FakeLLM, workspace: Path) -> None:
    (workspace / "README.md").write_text("# tool\n")
    (workspace / "stale.txt").write_text("x\n")
    (workspace / "notes.txt").write_text(NOTES.strip() + "\nshort\n")
    tasks = [
        {"id": "task_1", "description": "Read the README", "type": "FILE_READ", "dependencies": [],
         "action": {"tool": "read_file", "args": {"path": "README.md"}}},
        {"id": "task_3", "description": "Write the usage page", "type": "FILE_WRITE", "dependencies": ["task_1"],
         "files": ["docs/USAGE.md"]},
        {"id": "task_4", "description": "Remove the stale file", "type": "COMMAND", "dependencies": ["task_3"],
         "files": ["stale.txt"]},
    ]  # fmt: skip
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "document the usage", "tasks": tasks})))
    content = "".join(f"line {n}\n" for n in range(10))
    fake.on(all_of(task_is("task_3"), has_tool_result("write_file")), Reply.text(WROTE))
    fake.on(task_is("task_3"), Reply.tool_calls([("write_file", {"path": "docs/USAGE.md", "content": content})]))
    fake.on(all_of(task_is("task_4"), has_tool_result("execute_command")), Reply.text("removed"))
    fake.on(task_is("task_4"), Reply.tool_calls([("execute_command", {"command": "rm stale.txt"})]))
    script_summary(fake, SUMMARY)
    fake.on(all_of("show the notes", has_tool_result("execute_command")), Reply.text("Those are the notes."))
    fake.on(
        last_message_contains("show the notes"), Reply.tool_calls([("execute_command", {"command": "cat notes.txt"})])
    )


def words_shown(term: Terminal) -> set[str]:
    return {word for line in term.scrolled for word in line.split()}


def missing(term: Terminal, text: str) -> set[str]:
    return set(text.split()) - words_shown(term)


def cut_at_a_space(row: str, whole: str) -> bool:
    """`row` shows `whole` entirely, or a beginning of it that ends where a word does, then `…`."""
    row = row.strip()
    if row.endswith(whole):
        return True
    shown = row.removesuffix("…").rstrip()
    words = whole.split()
    return row.endswith("…") and any(shown.endswith(" ".join(words[:n])) for n in range(1, len(words)))


def rows_with(term: Terminal, text: str) -> list[str]:
    return [line for line in term.scrolled if text in line]


@pytest.mark.parametrize("columns", [40, 70, 120, 200])
def test_nothing_is_cut_inside_a_word_at_any_width(
    columns: int, fake: FakeLLM, workspace: Path, terminal: Callable[..., Terminal]
) -> None:
    script(fake, workspace)
    term = terminal("--no-review", "--sandbox", "off", rows=40, columns=columns)
    term.send("/plan document usage" + ENTER)
    term.wait_for(lambda t: not missing(t, HINT), timeout=20)  # the review keys, each word whole

    term.send(ENTER)
    term.wait_for(lambda t: "╰" in t.text and not missing(t, FOOTER), timeout=20)
    screen = term.lines
    top = max(n for n, line in enumerate(screen) if line.startswith("╭"))
    bottom = max(n for n, line in enumerate(screen) if line.startswith("╰"))
    assert all(line.startswith("│ ") for line in screen[top + 1 : bottom]), "\n".join(screen)  # the border holds
    assert not missing(term, "why: rm deletes files") and "rm stale.txt" in term.text
    live = [line for line in screen[:top] if line[:2] in ("✓ ", "● ", "○ ")]  # the live plan above the question
    assert [row.split()[1] for row in live] == ["task_1", "task_3", "task_4"], "\n".join(screen)
    assert cut_at_a_space(next(row for row in live if "task_3" in row), WROTE), "\n".join(screen)

    term.send("y")
    term.wait_for(lambda t: not missing(t, CHANGED), timeout=20)
    assert not missing(term, SUMMARY)
    final = rows_with(term, "✓ task_3 WRITE")[-1]
    assert cut_at_a_space(final, WROTE), final

    term.send("show the notes" + ENTER)
    term.wait_for("Those are the notes.", timeout=20)
    [output] = [line for line in term.scrolled if line.startswith("    this line of the notes")]
    assert cut_at_a_space(output, NOTES.strip()), output
    assert all(len(line) <= columns for line in term.scrolled)
