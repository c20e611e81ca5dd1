"""What a direct action read is shown as, through a real pseudo-terminal (issue 32, item 1): the line that
marks a tool's output as untrusted data is for the model only. At 70 columns it was the whole preview of a
direct `read_file` task's row (`✓ task_1 READ 0.1s [untrusted read_file output: data from th…`), and it showed
in the final report, Ctrl+O and /transcript too. The user sees the file's own text; the dependent task's
request still carries the marker. One session per width sees every screen."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from paicli.tools.toolbox import data_marker
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, requests_of, script_summary, system_is, task_is
from tests.ui.terminal import Terminal

pytestmark = pytest.mark.pty

ENTER, CTRL_O = "\r", "\x0f"
FIRST, SECOND = "the quick brown fox jumps over the lazy dog", "and a second line"
ANSWER, SUMMARY = "A fox and a dog.", "The notes are about a fox."
MARKED = "untrusted"  # a word of the marker (tools/toolbox.py data_marker) that nothing else here says


def script(fake: FakeLLM, workspace: Path) -> None:
    (workspace / "notes.txt").write_text(f"{FIRST}\n{SECOND}\n")
    tasks = [
        {"id": "task_1", "description": "Read the notes", "type": "FILE_READ", "dependencies": [],
         "action": {"tool": "read_file", "args": {"path": "notes.txt"}}},
        {"id": "task_2", "description": "Sum up the notes", "type": "ANALYSIS", "dependencies": ["task_1"]},
    ]  # fmt: skip
    fake.on(system_is(PLANNER), Reply.text(json.dumps({"summary": "read and sum up", "tasks": tasks})))
    fake.on(task_is("task_2"), Reply.text(ANSWER, latency=3))  # the live view shows task_1 done meanwhile
    script_summary(fake, SUMMARY)


def task_1_row(lines: list[str]) -> str | None:
    return next((line for line in reversed(lines) if line.startswith("✓ task_1 READ")), None)


def shows_the_content(row: str | None) -> bool:
    return row is not None and re.search(r"\b1 the quick\b", row) is not None


def after(lines: list[str], start: str) -> str:
    """The lines from the last one that starts with `start` (none: nothing)."""
    starts = [n for n, line in enumerate(lines) if line.startswith(start)]
    return "\n".join(lines[starts[-1] :]) if starts else ""


@pytest.mark.parametrize("columns", [70, 120])
def test_a_direct_reads_row_report_and_transcript_show_the_file_and_only_the_model_sees_the_marker(
    columns: int, fake: FakeLLM, workspace: Path, terminal: Callable[..., Terminal]
) -> None:
    script(fake, workspace)
    term = terminal("--no-review", rows=40, columns=columns)
    term.send("/plan sum up the notes" + ENTER)
    term.wait_for("Enter", timeout=20)
    assert MARKED not in "\n".join(term.scrolled)  # (nothing else on screen says the word)
    term.send(ENTER)

    # the live view, while task_2 waits for its reply: task_1's row previews the file, not the marker
    term.wait_for(  # (a frame drawn whole: its row shows the file, or the marker is somewhere on screen)
        lambda t: "● task_2" in t.text and (shows_the_content(task_1_row(t.lines)) or MARKED in t.text), timeout=20
    )
    live = term.text
    assert shows_the_content(task_1_row(term.lines)) and MARKED not in live, live

    # the final report
    term.wait_for(SUMMARY, timeout=20)
    term.wait_for(lambda t: t.lines[-1].lstrip().startswith("ask"), timeout=10)  # the toolbar: back at the prompt
    report = after(term.scrolled, "Plan COMPLETED")
    assert shows_the_content(task_1_row(report.splitlines())) and ANSWER in report, report
    assert MARKED not in report, report

    # Ctrl+O: the last tool output whole, as the file says it
    term.send(CTRL_O)
    term.wait_for(lambda t: SECOND in after(t.lines, "⏺ [task_1] read_file notes.txt"), timeout=10)
    expanded = after(term.lines, "⏺ [task_1] read_file notes.txt")
    assert FIRST in expanded and MARKED not in expanded, expanded

    # /transcript: the plan's calls and results
    term.send("/transcript" + ENTER)
    term.wait_for(lambda t: "■ task_2 completed" in t.text, timeout=10)
    transcript = after(term.lines, "› /transcript")
    assert "read_file notes.txt" in transcript and SECOND in transcript and MARKED not in transcript, transcript
    assert MARKED not in "\n".join(term.scrolled)

    # the model is still told that it is data: the dependent's brief carries the marker before the file
    (request,) = requests_of(fake, "task_2")
    marked = re.escape(data_marker("read_file")) + r"\s*1\t" + re.escape(FIRST)
    assert re.search(marked, request.text), request.text
