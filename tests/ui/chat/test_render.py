"""The chat renderer: what a user sees for streamed text, tool calls, usage and notices."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from rich.console import Console

from paicli.agent.react import ReactLoop
from paicli.common.events import ModelUsage, Notice, ReplyRestarted, TextDelta, ToolCallEvent, ToolResultEvent
from paicli.common.values import Usage
from paicli.llm.client import LLMClient
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox
from paicli.ui.chat.render import RESTARTED, ChatRenderer, MarkdownBlocks, tool_summary
from tests.fakellm import FakeLLM, Reply


def make_renderer(**kwargs: object) -> tuple[ChatRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False, color_system=None)
    return ChatRenderer(console, **kwargs), out  # type: ignore[arg-type]


def stream(renderer: ChatRenderer, text: str, size: int = 3) -> None:
    for start in range(0, len(text), size):
        renderer.emit(TextDelta(task_id=None, text=text[start : start + size]))


def lines_of(out: io.StringIO) -> list[str]:
    return [line.rstrip() for line in out.getvalue().splitlines()]


# ---- streamed Markdown ------------------------------------------------------------------------------


def test_each_markdown_block_appears_once_and_in_order() -> None:
    renderer, out = make_renderer()
    stream(renderer, "First paragraph with **bold**.\n\nSecond paragraph.\n\n- one\n- two\n\nLast words")
    renderer.end_turn()
    text = out.getvalue()
    for piece in ("First paragraph with bold.", "Second paragraph.", "• one", "• two", "Last words"):
        assert text.count(piece) == 1, piece
    assert text.index("First") < text.index("Second") < text.index("• one") < text.index("Last words")
    assert "**" not in text  # rendered as Markdown, not shown raw


def test_a_reply_asked_again_after_a_dropped_stream_is_shown_once() -> None:
    renderer, out = make_renderer()
    stream(renderer, "First paragraph.\n\nSecond, cut o")
    renderer.emit(ReplyRestarted(task_id=None))
    renderer.emit(Notice(level="warning", message="model request failed (the stream broke off), asking again"))
    stream(renderer, "First paragraph.\n\nSecond, whole this time.\n")
    renderer.end_turn()
    text = out.getvalue()
    assert text.count("First paragraph.") == 1 and text.count("Second, whole this time.") == 1
    assert "cut o" not in text and RESTARTED not in text


def test_a_restarted_reply_that_reads_differently_says_it_replaces_the_text_above() -> None:
    renderer, out = make_renderer()
    stream(renderer, "Plan A is best.\n\nBecause")
    renderer.emit(ReplyRestarted(task_id=None))
    stream(renderer, "Plan B is better.\n")
    renderer.end_turn()
    lines = [line for line in lines_of(out) if line]
    assert lines == ["Plan A is best.", RESTARTED, "Plan B is better."]


def test_a_complete_block_is_printed_before_the_reply_ends() -> None:
    renderer, out = make_renderer()
    stream(renderer, "Done with the first part.\n\nStill typ")
    assert "Done with the first part." in out.getvalue()
    assert "Still typ" not in out.getvalue()  # unfinished: waits for its block to end
    renderer.flush()
    assert "Still typ" in out.getvalue()


def test_blank_lines_inside_a_code_fence_do_not_split_it() -> None:
    renderer, out = make_renderer()
    stream(renderer, "Here:\n\n```python\ndef f():\n\n    return 1\n```\nAfter.", size=2)
    renderer.end_turn()
    lines = lines_of(out)
    assert "```" not in out.getvalue()
    code = [line.strip() for line in lines if line.strip()]
    assert code.index("def f():") + 1 == code.index("return 1")
    assert "After." in out.getvalue()


def test_a_closing_fence_completes_the_block_at_once() -> None:
    blocks = MarkdownBlocks()
    assert blocks.feed("```\nx = 1\n") == []
    assert blocks.feed("``") == []
    assert blocks.feed("`\nmore") == ["```\nx = 1\n```"]
    assert blocks.finish() == "more"


def test_a_longer_fence_is_not_closed_by_a_shorter_one() -> None:
    blocks = MarkdownBlocks()
    assert blocks.feed("````md\n```\ninner\n```\n\n") == []
    assert blocks.feed("````\n") == ["````md\n```\ninner\n```\n\n````"]


def test_pending_tail_stays_inside_its_code_block() -> None:
    blocks = MarkdownBlocks()
    blocks.feed("```py\n" + "".join(f"line{i}\n" for i in range(50)))
    tail = blocks.pending(max_chars=1000, max_lines=5)
    assert tail.startswith("```py\n")
    assert tail.splitlines()[-1] == "line49"
    assert "line10" not in tail


def test_long_streams_are_rendered_completely() -> None:
    renderer, out = make_renderer()
    paragraph = "lorem ipsum dolor sit amet " * 20 + "\n\n"
    text = (paragraph * (200_000 // len(paragraph) + 1))[:200_000] + "THE END"
    stream(renderer, text, size=5)
    renderer.end_turn()
    rendered = out.getvalue()
    assert rendered.count("lorem") == text.count("lorem")
    assert "THE END" in rendered


def test_a_single_huge_line_streams_in_linear_pieces() -> None:
    renderer, out = make_renderer(live_preview=True)  # exercises the preview path on a plain console
    stream(renderer, "word " * 40_000, size=5)
    renderer.end_turn()
    assert out.getvalue().count("word") >= 40_000


# ---- untrusted text ------------------------------------------------------------------------------------


def test_escape_sequences_in_model_text_are_stripped() -> None:
    renderer, out = make_renderer()
    stream(renderer, "before \x1b[2J\x1b]0;pwned\x07 after\r\n\nnext")
    renderer.end_turn()
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert r"before \x1b[2J\x1b]0;pwned\x07 after" in text  # shown as escapes, never obeyed


def test_rich_markup_in_model_text_is_shown_literally() -> None:
    renderer, out = make_renderer()
    stream(renderer, "use [bold]x[/bold] and [red]y")
    renderer.end_turn()
    assert "use [bold]x[/bold] and [red]y" in out.getvalue()


def test_markup_and_escapes_in_tool_output_are_harmless() -> None:
    renderer, out = make_renderer()
    renderer.emit(ToolCallEvent(task_id=None, name="execute_command", arguments={"command": "echo [bold]\x1b[31m"}))
    renderer.emit(ToolResultEvent(task_id=None, name="execute_command", ok=False, output="[red]boom[/red]\x1b[2J"))
    text = out.getvalue()
    assert "\x1b" not in text
    assert r"⏺ execute_command echo [bold]\x1b[31m" in text
    assert r"⎿ Error: [red]boom[/red]\x1b[2J" in text


def test_secrets_are_masked() -> None:
    renderer, out = make_renderer(secrets=["sk-very-secret"])
    stream(renderer, "the key is sk-very-secret\n\n")
    renderer.emit(ToolCallEvent(task_id=None, name="execute_command", arguments={"command": "echo sk-very-secret"}))
    renderer.end_turn()
    assert "sk-very-secret" not in out.getvalue()
    assert "the key is ***" in out.getvalue()


# ---- tool lines ----------------------------------------------------------------------------------------


def test_tool_call_and_result_lines() -> None:
    renderer, out = make_renderer()
    stream(renderer, "Let me look.")
    renderer.emit(ToolCallEvent(task_id=None, name="read_file", arguments={"path": "src/app.py"}))
    renderer.emit(ToolResultEvent(task_id=None, name="read_file", ok=True, output="\n".join(["x"] * 42)))
    renderer.emit(ToolCallEvent(task_id=None, name="edit_file", arguments={"path": "a.py", "old_text": "q"}))
    renderer.emit(ToolResultEvent(task_id=None, name="edit_file", ok=False, output="old_text not found in a.py\nhint"))
    assert lines_of(out) == [
        "Let me look.",
        "⏺ read_file src/app.py",
        "  ⎿ 42 lines",
        *["    x"] * 4,
        "    … 36 more lines · Ctrl+O shows all",
        *["    x"] * 2,
        "⏺ edit_file a.py",
        "  ⎿ Error: old_text not found in a.py",
        "    hint",
    ]
    stream(renderer, "Fixed it.")
    renderer.flush()
    assert lines_of(out)[-2:] == ["", "Fixed it."]  # the answer stands apart from the tool lines


def test_results_of_parallel_calls_name_their_tool() -> None:
    renderer, out = make_renderer()
    renderer.emit(ToolCallEvent(task_id=None, name="read_file", arguments={"path": "a"}))
    renderer.emit(ToolCallEvent(task_id=None, name="list_dir", arguments={}))
    renderer.emit(ToolResultEvent(task_id=None, name="read_file", ok=True, output="one line"))
    renderer.emit(ToolResultEvent(task_id=None, name="list_dir", ok=True, output=""))
    assert lines_of(out)[-3:] == ["  ⎿ read_file: 1 line", "    one line", "  ⎿ list_dir: no output"]


def test_tool_summaries() -> None:
    box = ToolBox.default()

    def shown(name: str, arguments: dict[str, Any] | str) -> str:
        summary = box.summary(name, arguments)  # what the ReAct loop puts in the event, from the tool's facts
        return tool_summary(ToolCallEvent(task_id=None, name=name, arguments=arguments, summary=summary))

    assert shown("execute_command", {"command": "pytest -q\n  --lf"}) == "pytest -q ⏎   --lf"
    assert shown("grep_code", {"pattern": "TODO", "path": "src"}) == "TODO in src"
    assert shown("glob_files", {"pattern": "*.py"}) == "*.py"
    assert shown("list_dir", {}) == "."
    assert shown("mystery", {"n": 1, "what": "thing"}) == "thing"
    assert shown("mystery", {"n": 1}) == '{"n": 1}'
    assert shown("read_file", "{not json") == "{not json"
    assert len(shown("write_file", {"path": "p" * 500})) <= 160
    assert shown("write_file", {"path": "p" * 500}).endswith("… (1 line, 500 characters)")


def test_usage_is_summed_per_turn_with_a_session_total() -> None:
    renderer, out = make_renderer()
    renderer.emit(ModelUsage(task_id=None, usage=Usage(prompt_tokens=1000, completion_tokens=50)))
    renderer.emit(ModelUsage(task_id=None, usage=Usage(prompt_tokens=234, completion_tokens=6)))
    renderer.end_turn()
    assert lines_of(out)[-1] == "↑ 1,234 ↓ 56 tokens"
    renderer.emit(ModelUsage(task_id=None, usage=Usage(prompt_tokens=10, completion_tokens=1)))
    renderer.end_turn()
    assert lines_of(out)[-1] == "↑ 10 ↓ 1 tokens · session ↑ 1,244 ↓ 57"
    assert renderer.session_usage == Usage(prompt_tokens=1244, completion_tokens=57)


def test_notices_are_single_lines_and_not_markup() -> None:
    renderer, out = make_renderer()
    renderer.emit(Notice(level="warning", message="retrying in 2 s [b]429[/b]"))
    assert lines_of(out) == ["retrying in 2 s [b]429[/b]"]


async def test_thinking_is_shown_until_the_model_answers() -> None:
    out = io.StringIO()
    renderer = ChatRenderer(Console(file=out, force_terminal=True, width=80, height=20))
    renderer.begin_wait()
    await asyncio.sleep(0.3)
    assert "Thinking…" in out.getvalue()
    renderer.emit(TextDelta(task_id=None, text="Here it is.\n\n"))
    shown = len(out.getvalue())
    await asyncio.sleep(0.3)
    renderer.end_turn()
    assert "Thinking…" not in out.getvalue()[shown:]
    assert "Here it is." in out.getvalue()


async def test_a_reply_whose_stream_ended_early_is_asked_again_and_shown_once(fake: FakeLLM, tmp_path: Path) -> None:
    """Issue 32, over the fake server: the stream ends cleanly mid-text (no finish_reason, no [DONE]); the loop
    asks again and the screen shows the answer once, with both requests' tokens."""
    answer = "First paragraph.\n\nSecond paragraph, whole this time.\n"
    fake.on("hi", Reply.cut(4, content=answer, chunk=6), Reply.text(answer, chunk=6))
    renderer, out = make_renderer()
    llm = LLMClient(base_url=fake.base_url, api_key="k", model="m", backoff_base=0.01, sink=renderer)
    loop = ReactLoop(llm=llm, tools=ToolBox.default(), ctx=ToolContext(tmp_path), sink=renderer)
    try:
        await loop.run([{"role": "user", "content": "hi"}])
    finally:
        await llm.aclose()
    renderer.end_turn()
    text = out.getvalue()
    assert len(fake.requests) == 2
    assert text.count("First paragraph.") == 1 and text.count("Second paragraph, whole this time.") == 1
    assert RESTARTED not in text and "ended before the reply was complete" in text
    assert renderer.session_usage.prompt_tokens > 2 * len("hi")  # both requests counted
    assert renderer.session_usage == loop.spent
