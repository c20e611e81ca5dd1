"""The live plan view: plain progress lines off a terminal, a live table on one, and the final report."""

from __future__ import annotations

import asyncio
import io
import time

import pytest
from rich.console import Console

from paicli.app.figures import format_duration, format_tokens
from paicli.common.events import (
    AnyEvent,
    ApprovalWaited,
    CommandOutput,
    ModelUsage,
    Notice,
    PlanApproved,
    PlanCreated,
    PlanFinished,
    PlanView,
    ReplanEvent,
    ReviewEvent,
    TaskFinished,
    TaskStarted,
    TaskView,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from paicli.common.values import Estimate, Retries, Usage
from paicli.llm.endpoint import Endpoint
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.ui.plan.live_view import LivePlanView


def plan() -> Plan:
    return Plan(
        goal="add a health endpoint",
        summary="read, write, test, check",
        tasks=[
            Task(id="task_1", description="Read src/app.py", type=TaskType.FILE_READ),
            Task(id="task_2", description="Add GET /health", type=TaskType.FILE_WRITE, dependencies=["task_1"]),
            Task(id="task_3", description="Run pytest -q", type=TaskType.COMMAND, dependencies=["task_1"]),
            Task(id="task_4", description="Check", type=TaskType.VERIFICATION, dependencies=["task_2", "task_3"]),
        ],
    )


def a_failing_run(start: float) -> list[AnyEvent]:
    """task_1 completes, task_2 and task_3 run in parallel, task_3 fails, task_4 is skipped."""
    return [
        PlanCreated(round=1, plan=plan().view()),
        PlanApproved(round=1),
        TaskStarted(task_id="task_1", ts=start),
        ToolCallEvent(task_id="task_1", name="read_file", arguments={"path": "src/app.py"}),
        ToolResultEvent(task_id="task_1", name="read_file", ok=True, output="from flask import Flask\n"),
        ModelUsage(task_id="task_1", usage=Usage(prompt_tokens=1200, completion_tokens=300)),
        TaskFinished(
            task_id="task_1", status="COMPLETED", result="The app uses Flask;\nroutes live in app.py", ts=start + 3.5
        ),
        TaskStarted(task_id="task_2", ts=start + 4),
        TaskStarted(task_id="task_3", ts=start + 4),
        TextDelta(task_id="task_2", text="STREAMED TEXT OF TASK 2"),
        TextDelta(task_id="task_3", text="STREAMED TEXT OF TASK 3"),
        ToolCallEvent(task_id="task_3", name="execute_command", arguments={"command": "pytest -q"}),
        ToolResultEvent(task_id="task_3", name="execute_command", ok=False, output="Error: exit 1"),
        ModelUsage(task_id="task_3", usage=Usage(prompt_tokens=800, completion_tokens=100)),
        TaskFinished(task_id="task_3", status="FAILED", error="step budget spent (12 steps)", ts=start + 10),
        TaskFinished(task_id="task_4", status="SKIPPED", error="depends on task_3, which failed", ts=start + 10),
        TaskFinished(task_id="task_2", status="COMPLETED", result="wrote src/app.py", ts=start + 11),
        ModelUsage(task_id=None, usage=Usage(prompt_tokens=300, completion_tokens=50)),
        PlanFinished(
            status="FAILED",
            summary="## What happened\n\n* the endpoint was **added**\n* the tests did not pass",
            usage=Usage(prompt_tokens=5000, completion_tokens=700),
        ),
    ]


def plain_console(width: int = 100) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width), out


def terminal_console(width: int = 100, height: int = 30) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, height=height, force_terminal=True, color_system=None), out


def test_off_a_terminal_progress_comes_as_plain_lines_and_the_outcome_once() -> None:
    console, out = plain_console()
    with LivePlanView(console) as view:
        for event in a_failing_run(time.time()):
            view.emit(event)
    text = out.getvalue()
    assert "\x1b[" not in text  # no cursor movement, no live region
    lines = text.splitlines()
    assert "● task_1 started" in lines
    assert "  task_1 › read_file: src/app.py" in lines
    assert "✓ task_1 completed in 3.5s: The app uses Flask; routes live in app.py" in lines
    assert "  task_3 › execute_command: pytest -q" in lines
    assert "✗ task_3 failed in 6.0s: step budget spent (12 steps)" in lines
    assert "↷ task_4 skipped: depends on task_3, which failed" in lines
    assert "Plan FAILED · 4 tasks: 2 completed, 1 failed, 1 skipped" in lines
    report = text[text.index("Plan FAILED") :]
    assert report.index("✓ task_1 READ") < report.index("✓ task_2 WRITE") < report.index("✗ task_3 CMD")
    assert "1.5k tok" in report and "900 tok" in report
    assert "Failed\n  ✗ task_3: step budget spent (12 steps)\n" in report
    assert "Skipped\n  ↷ task_4: depends on task_3, which failed\n" in report
    assert "What happened" in report and "• the endpoint was added" in report
    assert lines[-1] == "↑ 5,000 ↓ 700 tokens"
    assert text.count("Plan FAILED") == 1


def test_streamed_text_of_tasks_is_never_shown() -> None:
    console, out = plain_console()
    view = LivePlanView(console)
    for event in a_failing_run(time.time()):
        view.emit(event)
    assert "STREAMED TEXT" not in out.getvalue()


def test_model_and_tool_text_is_cleaned_masked_and_not_markup() -> None:
    console, out = plain_console()
    view = LivePlanView(console, secrets=["sk-123secret"])
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanApproved(round=1))
    view.emit(TaskStarted(task_id="task_1"))
    view.emit(ToolCallEvent(task_id="task_1", name="execute_command", arguments={"command": "curl -H sk-123secret x"}))
    view.emit(TaskFinished(task_id="task_1", status="FAILED", error="bad \x1b[2J[red]markup[/red]\x07 here"))
    view.emit(PlanFinished(status="FAILED", summary=None, usage=Usage()))
    text = out.getvalue()
    assert "sk-123secret" not in text and "curl -H *** x" in text
    assert r"bad \x1b[2J[red]markup[/red]\x07 here" in text  # shown, not obeyed; markup not applied
    assert "\x1b" not in text and "\x07" not in text


def test_the_usage_line_falls_back_to_the_usage_events_seen() -> None:
    console, out = plain_console()
    view = LivePlanView(console)
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(ModelUsage(task_id="task_1", usage=Usage(prompt_tokens=10, completion_tokens=2)))
    view.emit(ModelUsage(task_id=None, usage=Usage(prompt_tokens=5, completion_tokens=1)))
    view.emit(PlanFinished(status="CANCELLED", usage=Usage()))
    text = out.getvalue()
    assert "Plan CANCELLED · 4 tasks: 4 pending" in text
    assert "task_1" not in text  # nothing ran: no table
    assert text.splitlines()[-1] == "↑ 15 ↓ 3 tokens"


def second_round() -> Plan:
    """Round 2 after a_failing_run: the first round's tasks as they ended, and task_5 that fixes the tests."""
    second = plan()
    for task, status in zip(second.tasks, ("COMPLETED", "COMPLETED", "FAILED", "SKIPPED"), strict=True):
        task.status = TaskStatus(status)
    second.tasks.append(Task(id="task_5", description="Fix the tests", dependencies=["task_2"], round=2))
    return second


def test_replans_reviews_and_notices_are_announced_and_earlier_rounds_keep_their_runs() -> None:
    console, out = plain_console()
    view = LivePlanView(console)
    start = time.time()
    for event in a_failing_run(start)[:-1]:
        view.emit(event)
    view.emit(ReplanEvent(round=2, reason="task_3 failed: step budget spent"))
    second = second_round()
    view.emit(PlanCreated(round=2, plan=second.view()))
    view.emit(PlanApproved(round=2))
    view.emit(TaskStarted(task_id="task_5", ts=start + 20))
    view.emit(TaskFinished(task_id="task_5", status="COMPLETED", result="fixed", ts=start + 21))
    view.emit(ReviewEvent(round=2, score=9, reflection="good\nenough"))
    view.emit(Notice(level="warning", message="retrying after HTTP 429"))
    view.emit(PlanFinished(status="COMPLETED", summary="done", usage=Usage(prompt_tokens=1, completion_tokens=1)))
    text = out.getvalue()
    assert "↻ Replanning (round 2): task_3 failed: step budget spent" in text
    assert "Review of round 2: 9/10 · good enough" in text
    assert "retrying after HTTP 429" in text
    report = text[text.index("Plan COMPLETED") :]
    assert "Plan COMPLETED · 3 tasks done in 2 rounds" in report
    assert "1.5k tok" in report  # task_1's tokens from round 1 are kept
    assert "✓ task_5 THINK" in report and "✗ task_3 CMD" not in report  # the table shows what was done
    assert "Fixed by a replan\n  ✗ task_3 (round 1): step budget spent (12 steps)\n" in report
    assert "  ↷ task_4 (round 1): depends on task_3, which failed\n" in report


def test_a_completed_plan_shows_an_earlier_failure_as_one_row_not_its_traceback() -> None:
    console, out = plain_console(width=70)
    view = LivePlanView(console)
    start = time.time()
    traceback = "pytest failed:\n" + "\n".join(f'  File "tests/test_app.py", line {n}, in test_{n}' for n in range(17))
    for event in a_failing_run(start)[:-1]:
        if isinstance(event, TaskFinished) and event.status == "FAILED":
            event = event.model_copy(update={"error": traceback})
        view.emit(event)
    second = second_round()
    view.emit(PlanCreated(round=2, plan=second.view()))
    view.emit(PlanApproved(round=2))
    view.emit(TaskStarted(task_id="task_5", ts=start + 20))
    view.emit(TaskFinished(task_id="task_5", status="COMPLETED", result="fixed the test", ts=start + 21))
    view.emit(PlanFinished(status="COMPLETED", summary="Done: the tests pass.", usage=Usage(prompt_tokens=1)))
    report = out.getvalue()[out.getvalue().index("Plan COMPLETED") :]
    assert "  ✗ task_3 (round 1): pytest failed:\n" in report
    assert "test_app.py" not in report  # not one line of the traceback
    assert report.index("Fixed by a replan") < report.index("Done: the tests pass.")


def test_a_view_built_from_a_plan_shows_its_tasks() -> None:
    console, out = plain_console()
    resumed = plan()
    resumed.tasks[0].status = TaskStatus.COMPLETED
    resumed.tasks[0].result = "read it"
    resumed.tasks[0].started_at, resumed.tasks[0].finished_at = 10.0, 12.5
    view = LivePlanView(console, plan=resumed)
    view.emit(PlanFinished(status="CANCELLED", usage=Usage()))
    assert "✓ task_1 READ  2.5s read it" in out.getvalue()
    assert "○ task_2 WRITE      waits for" not in out.getvalue()  # task_1 is done: task_2 waits for nothing
    assert "○ task_2 WRITE      Add GET /health" in out.getvalue()


async def test_on_a_terminal_the_table_appears_once_approved_and_ticks_while_running() -> None:
    console, out = terminal_console()
    events = a_failing_run(time.time())
    with LivePlanView(console, refresh_per_second=20) as view:
        assert "Planning…" in out.getvalue()  # until the plan arrives
        view.emit(events[0])  # plan_created: the plan is being reviewed, nothing more is drawn
        drawn = out.getvalue()
        await asyncio.sleep(0.2)
        assert out.getvalue() == drawn and "Running plan" not in drawn
        view.emit(events[1])  # plan_approved
        view.emit(TaskStarted(task_id="task_1"))
        view.emit(ToolCallEvent(task_id="task_1", name="execute_command", arguments={"command": "pytest -q"}))
        await asyncio.sleep(1.0)
        live = out.getvalue()
        assert "Running plan · 4 tasks: 3 pending, 1 running" in live
        assert "● task_1 READ" in live and "execute_command: pytest -q" in live
        assert live.count("Running plan") >= 3  # redrawn by the ticker, not only on events
        for event in events[6:]:
            view.emit(event)
    text = out.getvalue()
    assert text.count("Plan FAILED") == 1
    assert "STREAMED TEXT" not in text
    final = text[text.index("Plan FAILED") :]
    assert "Running plan" not in final  # the live table is gone before the report
    assert "✗ task_3 CMD" in final and "↑ 5,000 ↓ 700 tokens" in final


async def test_while_rate_limited_the_table_says_how_many_run_and_when_it_retries() -> None:
    endpoint = Endpoint(max_in_flight=12, clock=lambda: 1000.0)  # time stands still: "retry in 4 s" stays
    console, out = terminal_console()
    events = a_failing_run(time.time())
    with LivePlanView(console, refresh_per_second=20, rate=endpoint.status) as view:
        for event in events[:3]:
            view.emit(event)
        await asyncio.sleep(0.2)
        assert "rate limited" not in out.getvalue()
        for _ in range(2):  # two episodes: 12 → 6 → 3
            endpoint.finish(await endpoint.admit(), "limited", 0.0)
            endpoint.gate.passed(probe=True)
        endpoint.finish(await endpoint.admit(), "failed")
        endpoint.gate.limited(4.2, probe=False)
        await asyncio.sleep(0.3)
        assert "rate limited: 3 of 12 running, retry in 4 s" in out.getvalue()


async def test_pause_hides_the_table_until_resumed() -> None:
    console, out = terminal_console()
    events = a_failing_run(time.time())
    view = LivePlanView(console, refresh_per_second=20)
    view.start()
    for event in events[:4]:
        view.emit(event)
    with view.paused():
        await asyncio.sleep(0.2)
        console.print("Run `rm -rf build`? [y/N]")
        during = len(out.getvalue())
        view.emit(ToolCallEvent(task_id="task_1", name="execute_command", arguments={"command": "rm -rf build"}))
        await asyncio.sleep(0.5)
        assert len(out.getvalue()) == during  # nothing drawn while paused
    await asyncio.sleep(0.3)
    after = out.getvalue()[during:]
    assert "execute_command: rm -rf build" in after  # redrawn after resume, with what happened meanwhile
    view.stop()


async def test_a_plan_taller_than_the_screen_shows_running_tasks_and_counts_the_rest() -> None:
    console, out = terminal_console(height=8)
    big = Plan(goal="g", tasks=[Task(id=f"t{n:02d}", description=f"step {n}") for n in range(20)])
    with LivePlanView(console) as view:
        view.emit(PlanCreated(round=1, plan=big.view()))
        view.emit(PlanApproved(round=1))
        for n in range(12):
            view.emit(TaskStarted(task_id=f"t{n:02d}"))
            view.emit(TaskFinished(task_id=f"t{n:02d}", status="COMPLETED", result="ok"))
        view.emit(TaskStarted(task_id="t15"))
        await asyncio.sleep(0.6)
        frame = out.getvalue().rsplit("Running plan", 1)[1]
        assert "● t15" in frame
        assert "○ t12" in frame and "○ t14" in frame  # the next ones to run
        assert "… 16 more: 4 pending, 12 completed" in frame


@pytest.mark.parametrize("seconds, shown", [(0.42, "0.4s"), (12.34, "12.3s"), (125, "2m05s"), (3720, "1h02m")])
def test_format_duration(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


@pytest.mark.parametrize("count, shown", [(532, "532 tok"), (12_340, "12.3k tok"), (1_250_000, "1.2M tok")])
def test_format_tokens(count: int, shown: str) -> None:
    assert format_tokens(count) == shown


def test_a_40_column_report_keeps_ids_and_cuts_only_the_outcome() -> None:
    console, out = plain_console(width=40)
    view = LivePlanView(console)
    for event in a_failing_run(time.time()):
        view.emit(event)
    text = out.getvalue()
    assert all(len(line) <= 40 for line in text.splitlines())
    report = text[text.index("Plan FAILED") :]
    assert "✓ task_1 READ  3.5s 1.5k tok The app…" in report  # cut at a space, never inside a word
    assert "✗ task_3 CMD   6.0s  900 tok step…" in report
    assert "  ✗ task_3: step budget spent (12 steps)" in report  # the reasons are never cut


def test_planning_and_replanning_are_shown_while_the_model_works() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, height=20)
    view = LivePlanView(console)
    view.start()  # no plan yet: the planner is at work
    assert "Planning…" in out.getvalue()
    view.emit(
        PlanCreated(
            round=1,
            plan=PlanView(
                summary="s",
                tasks=[TaskView(id="a", description="do a", type="ANALYSIS", dependencies=[], status="PENDING")],
            ),
        )
    )
    view.emit(PlanApproved(round=1))
    view.emit(TaskStarted(task_id="a"))
    view.emit(TaskFinished(task_id="a", status="FAILED", error="broke"))
    out.truncate(0)
    view.emit(ReplanEvent(round=2, reason="a failed: broke"))
    view._refresh(force=True)
    assert "Replanning…" in out.getvalue()
    view.stop()


def test_the_final_report_compares_the_estimate_with_what_was_used() -> None:
    out = io.StringIO()
    view = LivePlanView(Console(file=out, width=100))
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanApproved(round=1))
    estimate = Estimate(requests=7, prompt_tokens=31_000)
    usage = Usage(prompt_tokens=28_410, completion_tokens=900)
    view.emit(PlanFinished(status="COMPLETED", usage=usage, estimate=estimate, requests=6))
    assert "Used 6 model requests · 28,410 prompt tokens (estimated 7 · ~31k)" in out.getvalue()


def test_without_an_estimate_the_report_has_no_comparison() -> None:
    out = io.StringIO()
    view = LivePlanView(Console(file=out, width=100))
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanFinished(status="CANCELLED", usage=Usage()))
    assert "estimated" not in out.getvalue()


def test_a_cancelled_plan_shows_its_stopped_tasks_as_pending_not_running() -> None:
    out = io.StringIO()
    view = LivePlanView(Console(file=out, width=100))
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanApproved(round=1))
    view.emit(TaskStarted(task_id="task_1"))
    view.emit(PlanFinished(status="CANCELLED", usage=Usage()))
    report = out.getvalue()[out.getvalue().index("Plan CANCELLED") :]
    assert "running" not in report.splitlines()[0] and "4 pending" in report.splitlines()[0]


def test_a_running_command_shows_its_last_output_line_then_the_result_preview() -> None:
    console, out = plain_console()
    view = LivePlanView(console)
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanApproved(round=1))
    view.emit(TaskStarted(task_id="task_3"))
    view.emit(ToolCallEvent(task_id="task_3", name="execute_command", arguments={"command": "pytest -q"}))
    view.emit(CommandOutput(task_id="task_3", text="collected 3 items\n..F"))
    assert view.rows["task_3"].activity == "execute_command: pytest -q ⎿ ..F"
    view.emit(ToolResultEvent(task_id="task_3", name="execute_command", ok=True, output="..F\n1 failed\nexit code 1"))
    assert view.rows["task_3"].activity == "execute_command: pytest -q ⎿ exit code 1 · 2 lines"
    assert view.rows["task_3"].activity_failed
    assert "  task_3 ⎿ exit code 1 · 2 lines" in out.getvalue().splitlines()


def test_the_final_report_says_what_was_retried() -> None:
    out = io.StringIO()
    view = LivePlanView(Console(file=out, width=100))
    retries = Retries(rate_limited=8, streams=1, timeouts=2, waited_seconds=4.25)
    view.emit(PlanFinished(status="COMPLETED", usage=Usage(prompt_tokens=10, completion_tokens=2), retries=retries))
    assert "retried 8 rate limited, 1 broken stream, 2 timeouts (waits summing to 4.2 s)" in out.getvalue()
    quiet = io.StringIO()
    LivePlanView(Console(file=quiet, width=100)).emit(
        PlanFinished(status="COMPLETED", usage=Usage(), retries=Retries())
    )
    assert "retried" not in quiet.getvalue()


def test_tasks_appear_as_the_planner_writes_them_and_a_new_reply_takes_them_away() -> None:
    from paicli.common.events import PlanTaskStreamed, ReplyRestarted

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, height=20, color_system=None)
    view = LivePlanView(console)
    view.start()
    first, second = (task.view() for task in plan().tasks[:2])
    view.emit(PlanTaskStreamed(round=1, task=first, tokens=120, elapsed=1.5))
    view.emit(PlanTaskStreamed(round=1, task=second, tokens=260, elapsed=3.0))
    out.truncate(0)
    view._refresh(force=True)
    shown = out.getvalue()
    assert "Plan so far" in shown and "Read src/app.py" in shown and "task_2 WRITE" in shown
    assert "Planning…" in shown and "~260 tokens" in shown
    view.emit(ReplyRestarted(task_id=None))  # the reply is asked again: what it streamed is void
    out.truncate(0)
    view._refresh(force=True)
    assert "Read src/app.py" not in out.getvalue() and "Planning…" in out.getvalue()
    view.emit(PlanTaskStreamed(round=1, task=first, attempt=2, tokens=100, elapsed=0.5))
    view.emit(PlanCreated(round=1, plan=plan().view()))
    assert set(view.rows) == {"task_1", "task_2", "task_3", "task_4"}  # the plan, not the preview, from here
    view.emit(PlanApproved(round=1))
    out.truncate(0)
    view._refresh(force=True)
    assert "Running plan" in out.getvalue() and "Plan so far" not in out.getvalue()
    view.stop()


def test_off_a_terminal_each_streamed_task_is_one_plain_line() -> None:
    from paicli.common.events import PlanTaskStreamed

    console, out = plain_console()
    view = LivePlanView(console)
    view.emit(PlanTaskStreamed(round=1, task=plan().tasks[0].view(), tokens=50, elapsed=0.4))
    assert "task_1 planned: Read src/app.py" in out.getvalue()


def test_a_tasks_time_leaves_out_its_wait_for_the_users_answer() -> None:
    console, out = plain_console()
    view = LivePlanView(console)
    start = time.time()
    view.emit(PlanCreated(round=1, plan=plan().view()))
    view.emit(PlanApproved(round=1))
    view.emit(TaskStarted(task_id="task_3", ts=start))
    view.emit(ApprovalWaited(task_id="task_3", seconds=40.0))
    view.emit(TaskFinished(task_id="task_3", status="COMPLETED", result="ran", ts=start + 42.5))
    assert "✓ task_3 completed in 2.5s: ran" in out.getvalue().splitlines()
