"""The last turn whole: every call with its complete output and diff, the answer; masked and made safe."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

from paicli.common.events import ReplyRestarted, TaskFinished, TextDelta, ToolCallEvent, ToolResultEvent
from paicli.tools.diff import file_diff
from paicli.ui.chat.transcript import Transcript


def text_of(renderable: RenderableType | None) -> str:
    assert renderable is not None
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(renderable)
    return out.getvalue()


def test_the_turn_keeps_every_output_whole_and_the_last_one_is_at_hand() -> None:
    transcript = Transcript(secrets=["sk-secret-1234"])
    assert transcript.last_output() is None and transcript.renderable() is None
    transcript.begin("fix it")
    transcript.emit(ToolCallEvent(task_id=None, name="execute_command", arguments={}, summary="seq 50"))
    transcript.emit(
        ToolResultEvent(
            task_id=None, name="execute_command", ok=True, output="".join(f"{n}\n" for n in range(50)) + "exit code 0"
        )
    )
    transcript.emit(ToolCallEvent(task_id=None, name="write_file", arguments={}, summary="a.py"))
    diff = file_diff("a.py", None, "KEY = 'sk-secret-1234'\n")
    transcript.emit(ToolResultEvent(task_id=None, name="write_file", ok=True, output="wrote 2 bytes", diff=diff))
    transcript.emit(TextDelta(task_id=None, text="Done, \x1b[2Jall "))
    transcript.emit(TextDelta(task_id=None, text="good."))
    whole = text_of(transcript.renderable())
    assert "› fix it" in whole and "⏺ execute_command seq 50" in whole
    assert "\n25\n" in whole  # the middle a preview hides
    assert "+KEY = '***'" in whole and "sk-secret-1234" not in whole
    assert "Done, \\x1b[2Jall good." in whole
    last = text_of(transcript.last_output())
    assert "⏺ write_file a.py" in last and "execute_command" not in last


def test_plan_tasks_are_named_and_their_text_left_out() -> None:
    transcript = Transcript()
    transcript.begin("/plan go")
    transcript.emit(ToolCallEvent(task_id="t1", name="read_file", arguments={}, summary="a.py"))
    transcript.emit(ToolCallEvent(task_id="t2", name="read_file", arguments={}, summary="b.py"))
    transcript.emit(TextDelta(task_id="t1", text="interleaved"))
    transcript.emit(ToolResultEvent(task_id="t2", name="read_file", ok=False, output="Error: file not found: b.py"))
    transcript.emit(TaskFinished(task_id="t2", status="FAILED", error="no b.py"))
    whole = text_of(transcript.renderable())
    assert "interleaved" not in whole
    assert "[t1] read_file a.py\n  ⎿ (no result: cancelled or still running)" in whole
    assert "[t2] read_file b.py\n  ⎿ Error: file not found: b.py" in whole
    assert "■ t2 failed: no b.py" in whole


def test_a_reply_that_broke_off_and_was_asked_again_leaves_only_the_new_text() -> None:
    transcript = Transcript()
    transcript.begin("explain")
    transcript.emit(ToolCallEvent(task_id=None, name="read_file", arguments={}, summary="a.py"))
    transcript.emit(ToolResultEvent(task_id=None, name="read_file", ok=True, output="x = 1"))
    transcript.emit(TextDelta(task_id=None, text="It sets x to "))
    transcript.emit(ReplyRestarted(task_id=None))  # the stream broke: that text is void
    transcript.emit(TextDelta(task_id=None, text="a.py sets x to one."))
    transcript.emit(ReplyRestarted(task_id="t1"))  # a task's restart touches no chat text
    whole = text_of(transcript.renderable())
    assert "It sets x to" not in whole
    assert "a.py sets x to one." in whole and "⏺ read_file a.py" in whole
