"""The streaming review screen's state and what it draws, in process (the keys are tested in a pty:
tests/ui/plan/test_review_stream_pty.py)."""

from __future__ import annotations

from paicli.common.events import PlanCreated, PlanTaskStreamed, PlanView, ReplyRestarted, TaskView
from paicli.plan.model import TaskStatus, TaskType
from paicli.ui.plan.review_stream import ROWS_SHOWN, StreamingReview


def streamed(task_id: str, description: str = "read it", tokens: int = 10) -> PlanTaskStreamed:
    view = TaskView(
        id=task_id, description=description, type=TaskType.ANALYSIS, dependencies=[], status=TaskStatus.PENDING
    )
    return PlanTaskStreamed(round=1, task=view, tokens=tokens)


def drawn(review: StreamingReview) -> str:
    return "".join(text for _style, text, *_ in review._text())


def test_tasks_fill_in_their_order_with_the_token_count() -> None:
    review = StreamingReview()
    review.emit(streamed("scan", "list the modules", tokens=120))
    review.emit(streamed("report", "write the notes", tokens=1640))
    text = drawn(review)
    assert "Planning…" in text and "~1,640 tokens" in text and "2 tasks so far" in text
    assert text.index("list the modules") < text.index("write the notes")
    assert "Enter" not in text  # only the whole plan's review offers approval


def test_a_restarted_reply_takes_its_tasks_away_and_a_repeated_id_is_one_row() -> None:
    review = StreamingReview()
    review.emit(streamed("scan", "first version"))
    review.emit(streamed("scan", "second version"))
    assert list(review.tasks) == ["scan"] and "second version" in drawn(review)
    review.emit(ReplyRestarted(task_id=None))
    assert review.tasks == {}
    review.emit(ReplyRestarted(task_id="task_1"))  # a task's own reply restarting is not the planner's
    review.emit(streamed("again"))
    assert list(review.tasks) == ["again"]


def test_nothing_streams_in_after_the_plan_is_in() -> None:
    review = StreamingReview()
    review.emit(PlanCreated(round=1, plan=PlanView(summary="s", tasks=[])))
    review.emit(streamed("late"))
    assert review.complete and review.tasks == {}


def test_hostile_text_is_cleaned_masked_and_cut_at_the_edge() -> None:
    review = StreamingReview(secrets=["sk-SECRET-123"])
    review.emit(streamed("a\x1b[2Jb\nc", "key sk-SECRET-123 \x1b]0;title\x07 " + "x" * 500))
    text = drawn(review)
    assert "\x1b" not in text and "\x07" not in text
    assert "sk-SECRET-123" not in text and "***" in text
    assert all(len(row) < 80 for row in text.split("\n"))  # prompt_toolkit's dummy output is 80 wide


def test_many_tasks_are_counted_not_all_drawn() -> None:
    review = StreamingReview()
    for number in range(ROWS_SHOWN + 12):
        review.emit(streamed(f"t{number}", f"task number {number}"))
    text = drawn(review)
    assert f"task number {ROWS_SHOWN - 1}" in text and f"task number {ROWS_SHOWN}" not in text
    assert "and 12 more" in text
