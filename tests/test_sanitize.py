"""One sanitizer for untrusted text (paicli/common/sanitize.py): a table of hostile characters, run over every
display path (chat, live view, review screen, approval prompt, audit, headless progress, JSON lines,
`paicli run`'s answer, start-up error messages)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from paicli.common.events import (
    Notice,
    PlanCreated,
    PlanFinished,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.sanitize import json_safe, one_line, terminal_safe
from paicli.common.shown import rows
from paicli.common.values import Usage
from paicli.headless import JsonLinesSink, progress_line
from paicli.plan.model import Plan, Task, TaskType
from paicli.policy.approval import PolicyRequest
from paicli.ui.chat.render import ChatRenderer
from paicli.ui.plan.live_view import LivePlanView
from paicli.ui.plan.plan_view import render_plan
from paicli.ui.prompt.approval_prompt import question
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply

# (name, hostile text, what must be shown instead)
HOSTILE: list[tuple[str, str, str]] = [
    ("bell", "a\x07b", r"a\x07b"),
    ("clear screen (CSI)", "a\x1b[2Jb", r"a\x1b[2Jb"),
    ("colour (SGR)", "\x1b[31mred\x1b[0m", r"\x1b[31mred\x1b[0m"),
    ("window title (OSC 0)", "\x1b]0;pwned\x07", r"\x1b]0;pwned\x07"),
    ("clipboard write (OSC 52)", "\x1b]52;c;cm0gLXJmIC8=\x1b\\", r"\x1b]52;c;cm0gLXJmIC8=\x1b" + "\\"),
    ("hyperlink (OSC 8)", "\x1b]8;;http://evil\x07x\x1b]8;;\x07", r"\x1b]8;;http://evil\x07x\x1b]8;;\x07"),
    ("C1 CSI", "a\x9b2Jb", r"a\x9b2Jb"),
    ("C1 OSC", "a\x9d0;t\x9cb", r"a\x9d0;t\x9cb"),
    ("delete", "a\x7fb", r"a\x7fb"),
    ("backspace", "rm\x08\x08ls", r"rm\x08\x08ls"),
    ("lone carriage return", "safe\rrm -rf", r"safe\x0drm -rf"),
    ("right-to-left override", "abc\u202edef", r"abc\u202edef"),
    ("left-to-right embedding", "a\u202ab", r"a\u202ab"),
    ("bidi isolate", "a\u2066b\u2069", r"a\u2066b\u2069"),
    ("right-to-left mark", "a\u200fb", r"a\u200fb"),
    ("arabic letter mark", "a\u061cb", r"a\u061cb"),
    ("zero-width space", "ev\u200bil", r"ev\u200bil"),
    ("zero-width joiner", "a\u200db", r"a\u200db"),
    ("word joiner", "a\u2060b", r"a\u2060b"),
    ("byte order mark", "\ufeffx", r"\ufeffx"),
    ("line separator", "a\u2028b", r"a\u2028b"),
    ("paragraph separator", "a\u2029b", r"a\u2029b"),
    ("NUL", "a\x00b", r"a\x00b"),
]
RAW_FORBIDDEN = [
    "\x1b",
    "\x07",
    "\x9b",
    "\x9d",
    "\x9c",
    "\x7f",
    "\x08",
    "\r",
    "\x00",
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2069",
    "\u200f",
    "\u061c",
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u2028",
    "\u2029",
]
IDS = [name for name, _, _ in HOSTILE]


def raw_controls(text: str) -> list[str]:
    return [char for char in RAW_FORBIDDEN if char in text]


def without_rich_styles(text: str) -> str:
    """rich's own colour codes are ours; anything else of the kind would be a leak."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=300, color_system="truecolor", highlight=False), out


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_terminal_safe_shows_each_hostile_character_as_an_escape(name: str, hostile: str, shown: str) -> None:
    assert terminal_safe(hostile) == shown
    assert raw_controls(terminal_safe(hostile)) == []


def test_ordinary_text_is_unchanged() -> None:
    text = "tabs\tand\nnewlines, CRLF ends, 中文, émoji 😀, → arrows, «quotes», ZWJ-free text"
    assert terminal_safe(text) == text
    assert terminal_safe("a\r\nb") == "a\nb"
    assert one_line("a\n\n b\tc", limit=160) == "a b c"
    assert one_line("x" * 10, limit=5) == "xxxx…"


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_json_lines_escape_controls_and_keep_the_data(name: str, hostile: str, shown: str) -> None:
    out = io.StringIO()
    JsonLinesSink(out, secrets=[]).emit(ToolResultEvent(task_id=None, name="execute_command", ok=True, output=hostile))
    line = out.getvalue()
    assert raw_controls(line) == [], name
    assert json.loads(line)["output"] == hostile  # a JSON reader gets the exact text back


def test_json_safe_escapes_astral_format_characters_as_surrogate_pairs() -> None:
    tag = "\U000e0041"  # TAG LATIN CAPITAL LETTER A: an invisible format character
    document = json.dumps({"a": f"x{tag}y"}, ensure_ascii=False)
    escaped = json_safe(document)
    assert tag not in escaped and json.loads(escaped) == {"a": f"x{tag}y"}


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_chat_renderer_paths(name: str, hostile: str, shown: str) -> None:
    screen, out = console()
    renderer = ChatRenderer(screen, live_preview=False)
    renderer.emit(ToolCallEvent(task_id=None, name="execute_command", arguments={"command": f"echo {hostile}"}))
    renderer.emit(ToolResultEvent(task_id=None, name="execute_command", ok=False, output=f"boom {hostile}"))
    renderer.emit(Notice(level="warning", message=f"notice {hostile}"))
    renderer.emit(TextDelta(task_id=None, text=f"answer {hostile}\n\n"))
    renderer.line(f"error {hostile}", "red")
    renderer.end_turn()
    text = without_rich_styles(out.getvalue())
    assert raw_controls(text) == []
    for label in ("echo", "boom", "notice", "answer", "error"):
        assert f"{label} {shown}" in text, (label, text)


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_live_plan_view_paths(name: str, hostile: str, shown: str) -> None:
    screen, out = console()
    plan = Plan(
        goal="g",
        summary=f"summary {hostile}",
        tasks=[Task(id="task_1", description=f"describe {hostile}", type=TaskType.COMMAND)],
    )
    view = LivePlanView(screen)
    view.emit(PlanCreated(round=1, plan=plan.view()))
    view.emit(TaskStarted(task_id="task_1"))
    view.emit(ToolCallEvent(task_id="task_1", name="execute_command", arguments={"command": f"echo {hostile}"}))
    view.emit(TaskFinished(task_id="task_1", status="FAILED", error=f"failed {hostile}"))
    view.emit(PlanFinished(status="FAILED", summary=f"final {hostile}", usage=Usage()))
    text = without_rich_styles(out.getvalue())
    assert raw_controls(text) == []
    assert f"failed {shown}" in text


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_review_screen_plan_rendering(name: str, hostile: str, shown: str) -> None:
    screen, out = console()
    plan = Plan(
        goal="g",
        summary=f"summary {hostile}",
        tasks=[Task(id="task_1", description=f"describe {hostile}", type=TaskType.ANALYSIS)],
    )
    screen.print(render_plan(plan, expanded=True))
    text = without_rich_styles(out.getvalue())
    assert raw_controls(text) == []
    assert f"describe {shown}" in text and f"summary {shown}" in text


@pytest.mark.parametrize(("name", "hostile", "shown"), HOSTILE, ids=IDS)
def test_approval_prompt_and_headless_progress(name: str, hostile: str, shown: str) -> None:
    request = PolicyRequest(task_id="t", tool="execute_command", summary=f"ls {hostile}", reason=f"why {hostile}")
    text = "".join(fragment[1] for fragment in question(request))
    assert raw_controls(text) == [] and f"ls {shown}" in text and f"why {shown}" in text
    assert raw_controls("\n".join(rows(f"cmd {hostile}", 40))) == []
    for event in (
        ToolCallEvent(task_id="t", name="execute_command", arguments={"command": hostile}),
        ToolResultEvent(task_id="t", name="execute_command", ok=False, output=f"x {hostile}"),
        TaskFinished(task_id="t", status="FAILED", error=hostile),
        Notice(message=hostile),
    ):
        line = progress_line(event)
        assert line is not None and raw_controls(line) == []


def test_markdown_links_show_their_targets_not_terminal_hyperlinks() -> None:
    screen, out = console()
    renderer = ChatRenderer(screen, live_preview=False)
    renderer.emit(TextDelta(task_id=None, text="see [the docs](http://evil.example/steal) now\n\n"))
    renderer.end_turn()
    text = out.getvalue()
    assert "\x1b]8;" not in text  # no OSC 8 hyperlink whose text hides where it leads
    assert "http://evil.example/steal" in without_rich_styles(text)


def test_paicli_run_prints_a_hostile_answer_harmlessly(fake: FakeLLM, workspace: Path, home: Path) -> None:
    hostile = "done \x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\x9b1m\u202eevil"
    fake.on("hello", Reply.text(hostile), repeat=True)
    done = run_paicli(["-C", str(workspace), "run", "hello"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert raw_controls(done.stdout) == []
    assert r"done \x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\x9b1m\u202eevil" in done.stdout
    with_json = run_paicli(["-C", str(workspace), "run", "hello", "--json"], paicli_env(fake, home))
    assert raw_controls(with_json.stdout) == []
    assert with_json.of("run_finished")[0]["content"] == hostile


def test_a_hostile_key_in_an_untrusted_config_is_shown_harmlessly_at_start_up(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / ".paicli").mkdir()
    (workspace / ".paicli" / "config.toml").write_text('"evil\\u001b]52;c;eA==\\u0007\\u001b[2J" = 1\n')
    done = run_paicli(["-C", str(workspace), "run", "hello"], paicli_env(fake, home))
    assert done.code == 2
    assert raw_controls(done.stderr) == [] and "unknown setting" in done.stderr
    assert r"evil\x1b]52;c;eA==\x07\x1b[2J" in done.stderr
