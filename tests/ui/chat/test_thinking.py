"""A reasoning model's thinking in the chat view: dimmed and live while it streams, one line once the
answer starts ("Thought for 12 s"), and in full on /thinking."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from paicli.common.events import ReasoningDelta, TextDelta, ToolCallEvent
from paicli.ui.chat.render import ChatRenderer
from paicli.ui.chat.thinking import Thinking, thought_time
from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, Spawn, expect_text


def test_thinking_collapses_to_one_line_before_the_answer() -> None:
    out = io.StringIO()
    renderer = ChatRenderer(Console(file=out, width=80, force_terminal=False, color_system=None))
    renderer.emit(ReasoningDelta(task_id=None, text="weighing the options, "))
    renderer.emit(ReasoningDelta(task_id=None, text="then deciding"))
    renderer.emit(TextDelta(task_id=None, text="The answer.\n\n"))
    renderer.end_turn()
    lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert lines[0].startswith("✻ Thought for ") and lines[0].endswith("/thinking shows it")
    assert lines[1] == "The answer."
    assert "weighing" not in out.getvalue()  # collapsed: not printed for good
    assert renderer.thinking.last == "weighing the options, then deciding"


def test_thinking_before_a_tool_call_collapses_too() -> None:
    out = io.StringIO()
    renderer = ChatRenderer(Console(file=out, width=80, force_terminal=False, color_system=None))
    renderer.emit(ReasoningDelta(task_id=None, text="I should read it"))
    renderer.emit(ToolCallEvent(task_id=None, name="read_file", arguments={"path": "a.py"}, summary="a.py"))
    assert out.getvalue().index("Thought for") < out.getvalue().index("read_file")


async def test_thinking_is_shown_dimmed_while_it_streams() -> None:
    out = io.StringIO()
    renderer = ChatRenderer(Console(file=out, force_terminal=True, width=80, height=20))
    renderer.emit(ReasoningDelta(task_id=None, text="considering \x1b[31mred\x1b[0m things"))
    shown = out.getvalue()
    assert "Thinking…" in shown and "considering" in shown
    assert "\x1b[2" in shown  # dim
    assert "\x1b[31mred" not in shown  # model text is sanitized, never drives the terminal
    renderer.emit(TextDelta(task_id=None, text="Done.\n\n"))
    renderer.end_turn()
    assert "Thought for" in out.getvalue()


@pytest.mark.parametrize(("seconds", "text"), [(0.44, "0.4 s"), (12.2, "12 s"), (125, "2 min 05 s")])
def test_thought_time_reads_naturally(seconds: float, text: str) -> None:
    now = [100.0]
    thinking = Thinking(clock=lambda: now[0])
    thinking.add("hm")
    now[0] += seconds
    assert thinking.close() == f"✻ Thought for {text} · /thinking shows it"
    assert thought_time(seconds) == text
    assert thinking.close() is None  # nothing under way any more


@pytest.mark.pty
def test_slash_thinking_shows_the_last_thought_in_full(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.on("riddle", Reply.text("It is a map.", reasoning="cities without houses, forests without trees"))
    child = spawn_repl()
    child.send("riddle\r")
    expect_text(child, "Thought for")
    expect_text(child, "It is a map.")
    child.expect_exact(PROMPT)
    child.send("/thinking\r")
    expect_text(child, "cities without houses, forests without trees")
