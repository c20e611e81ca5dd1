"""Early start (streamed planning, --early): read-only tasks start while the planner still writes the plan;
writers, commands and checks wait for the validated plan; the events keep the order scripts read; the
faults of issue 33. The real runtime, client and plan session against the fake server over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_plan
from paicli.app.jsonl import QUIET_IN_JSON
from paicli.common.events import AnyEvent, ListSink, Notice, PlanFinished, PlanTaskStreamed
from paicli.config import Settings
from paicli.plan.model import PlanStatus
from paicli.plan.saved_plans import PlanStore
from paicli.runtime import Runtime, build_runtime
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, RecordedRequest, Reply, all_of, has_tool_result, last_message_contains
from tests.plan_script import PLANNER, SUMMARIZER, requests_of, system_is, task_is

CHUNK, DELAY = 24, 0.03  # the planner's reply streams at 800 characters a second


def task(tid: str, kind: str = "ANALYSIS", deps: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    return {"id": tid, "description": f"do {tid}", "type": kind, "dependencies": list(deps), **extra}


def reply(*tasks: dict[str, Any], padding: int = 0) -> str:
    """A plan; `padding` characters of summary at its end keep the stream going after the last task."""
    return json.dumps({"tasks": list(tasks), "summary": "the plan " + "." * padding})


READS_THEN_WRITE = reply(
    task("a"),
    task("b", "FILE_READ"),
    task("w", "FILE_WRITE", ("a", "b"), files=["out.txt"]),
    task("v", "VERIFICATION", ("w",)),
    padding=1200,  # 1.5 s more of stream after the last task object
)


@pytest.fixture
async def runtime(fake: FakeLLM, workspace: Path) -> AsyncIterator[Runtime]:
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(TEST_KEY),
        base_url=fake.base_url,
        model="fake-model",
        max_attempts=2,
        retry_backoff=0.01,
        review=False,
        early_start=True,
    )
    runtime = build_runtime(settings, ListSink())
    yield runtime
    await runtime.aclose()


def planner_requests(fake: FakeLLM) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.body is not None and system_is(PLANNER)(r.body)]


def kinds(events: list[AnyEvent]) -> list[str]:
    """The events --json writes, without usage, notices and the streamed tasks."""
    skipped = {"usage", "notice", "plan_task_streamed", *QUIET_IN_JSON}
    return [e.event for e in events if e.event not in skipped]


def notices(events: list[AnyEvent]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice)]


def answer_tasks(fake: FakeLLM, *ids: str, latency: float = 0.0) -> None:
    for tid in ids:
        fake.on(task_is(tid), Reply.text(f"{tid.upper()}-RESULT", latency=latency), repeat=True)
    fake.on(system_is(SUMMARIZER), Reply.text("All done."), repeat=True)


async def test_reads_start_while_the_plan_streams_and_writers_wait_for_the_whole_plan_but_their_first_request(
    fake: FakeLLM, runtime: Runtime
) -> None:
    fake.on(system_is(PLANNER), Reply.text(READS_THEN_WRITE, chunk=CHUNK, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b", "w", "v")
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    (planning,) = planner_requests(fake)
    assert planning.finished is not None
    for tid in ("a", "b"):  # started and answered while the planner still wrote
        (read,) = requests_of(fake, tid)
        assert read.started < planning.finished and read.finished is not None and read.finished < planning.finished
    # the writer's first request went out early (its dependencies had completed), the check's did not
    (w_request,) = requests_of(fake, "w")  # taken by the scheduler's run, not asked again
    assert w_request.started < planning.finished
    assert requests_of(fake, "v")[0].started > planning.finished
    # the order scripts read: streamed tasks, plan_created, plan_approved, then every task's events
    events = [(e.event, getattr(e, "task_id", None)) for e in sink.events if e.event in kinds(sink.events)]
    assert events[:6] == [
        ("plan_created", None),
        ("plan_approved", None),
        ("task_started", "a"),
        ("task_finished", "a"),
        ("task_started", "b"),
        ("task_finished", "b"),
    ]
    created = next(e for e in sink.events if e.event == "plan_created")
    started = {e.task_id: e for e in sink.events if e.event == "task_started"}  # type: ignore[union-attr]
    assert started["a"].ts < created.ts and started["b"].ts < created.ts  # their own time, held back
    assert started["w"].ts > created.ts
    finished = next(e for e in sink.events if isinstance(e, PlanFinished))
    assert finished.requests == len(fake.requests) - 1  # everything but the planner's request, early reads included
    saved = PlanStore(runtime.workspace).load(outcome.saved_id or "").plan
    assert {t.id: t.started_early for t in saved.tasks} == {"a": True, "b": True, "w": False, "v": False}
    w_brief = requests_of(fake, "w")[0].text
    assert "A-RESULT" in w_brief and "B-RESULT" in w_brief  # the early results feed the writer


async def test_a_read_that_depends_on_a_read_starts_when_that_one_completes(fake: FakeLLM, runtime: Runtime) -> None:
    text = reply(task("a"), task("b", deps=("a",)), task("c", deps=("w",)), task("w", "FILE_WRITE", files=["x.txt"]))
    fake.on(system_is(PLANNER), Reply.text(text + " " * 1500, chunk=CHUNK, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b", "c", "w")
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    (planning,) = planner_requests(fake)
    assert planning.finished is not None
    a, b, c = (requests_of(fake, tid)[0] for tid in ("a", "b", "c"))
    assert a.finished is not None and a.finished <= b.started < planning.finished  # b after a, still early
    assert c.started > planning.finished  # it depends on a writer: it waits for the whole plan
    assert "A-RESULT" in b.text


async def test_without_early_start_nothing_runs_before_the_plan_is_complete(fake: FakeLLM, runtime: Runtime) -> None:
    fake.on(system_is(PLANNER), Reply.text(READS_THEN_WRITE, chunk=CHUNK * 4, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b", "w", "v")
    outcome = await run_plan(runtime, ListSink(), goal="build it", early=False)
    assert outcome.status is PlanStatus.COMPLETED
    (planning,) = planner_requests(fake)
    assert planning.finished is not None
    assert all(r.started > planning.finished for r in fake.requests[1:])


async def test_a_reask_keeps_the_early_task_it_repeats_and_discards_the_one_it_changed(
    fake: FakeLLM, runtime: Runtime
) -> None:
    cyclic = reply(task("a"), task("b"), task("c", deps=("d",)), task("d", deps=("c",)), padding=400)
    fixed = reply(task("a"), {**task("b"), "description": "do b differently"}, task("c"), task("d", deps=("c",)))
    fake.on(last_message_contains("could not be used"), Reply.text(fixed, chunk=CHUNK, chunk_delay=DELAY))
    fake.on(system_is(PLANNER), Reply.text(cyclic, chunk=CHUNK, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b", "c", "d")
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    assert len(requests_of(fake, "a")) == 1  # kept: the same spec in the new reply
    assert [("differently" in r.text) for r in requests_of(fake, "b")] == [False, True]  # discarded, run again
    assert any("b started early, but the planner changed it" in message for message in notices(sink.events))
    started = [e.task_id for e in sink.events if e.event == "task_started"]  # type: ignore[union-attr]
    assert sorted(started) == ["a", "b", "c", "d"]  # the discarded run of b wrote no events
    assert [e.attempt for e in sink.events if isinstance(e, PlanTaskStreamed)][-1] == 2


async def test_a_stream_broken_inside_a_task_object_is_asked_again_and_the_early_read_kept(
    fake: FakeLLM, runtime: Runtime
) -> None:
    text = reply(task("a"), task("b"), task("w", "FILE_WRITE", ("a", "b"), files=["out.txt"]), padding=200)
    cut = text.index('"id": "b"') + 40  # inside b's object, after a's (the stream sends whole chunks)
    fake.on(system_is(PLANNER), Reply.drop(after_chunks=cut // CHUNK, content=text, chunk=CHUNK, chunk_delay=DELAY))
    fake.on(system_is(PLANNER), Reply.text(text, chunk=CHUNK, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b", "w", latency=0.3)
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    assert len(planner_requests(fake)) == 2
    assert len(requests_of(fake, "a")) == 1 and len(requests_of(fake, "b")) == 1
    assert requests_of(fake, "a")[0].started < planner_requests(fake)[1].started  # it started in the broken reply
    saved = PlanStore(runtime.workspace).load(outcome.saved_id or "").plan
    assert saved.task("a").started_early and saved.task("b").started_early


async def test_a_plan_that_never_validates_writes_nothing_and_no_task_events(
    fake: FakeLLM, runtime: Runtime, workspace: Path
) -> None:
    cyclic = reply(task("a"), task("b", "FILE_READ"), task("c", deps=("d",)), task("d", deps=("c",)))
    fake.on(system_is(PLANNER), Reply.text(cyclic, chunk=CHUNK, chunk_delay=DELAY), repeat=True)
    fake.on(task_is("a"), Reply.hang())  # still running when planning gives up: cancelled
    fake.on(task_is("b"), Reply.text("B-RESULT"))  # finished: its result goes nowhere
    before = sorted(p.name for p in workspace.iterdir())
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="build it")
    assert outcome.status is PlanStatus.FAILED and outcome.plan is None
    assert kinds(sink.events) == ["plan_finished"]
    (a_request,) = requests_of(fake, "a")
    assert a_request.wait_finished(5) and a_request.disconnected
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".paicli") == [n for n in before if n != ".paicli"]


async def test_a_repeated_id_is_rejected_and_the_early_read_of_the_first_kept(fake: FakeLLM, runtime: Runtime) -> None:
    repeated = reply(task("a"), {**task("a"), "description": "another a"}, task("b"), padding=300)
    fixed = reply(task("a"), task("b"))
    fake.on(last_message_contains("could not be used"), Reply.text(fixed, chunk=CHUNK, chunk_delay=DELAY))
    fake.on(system_is(PLANNER), Reply.text(repeated, chunk=CHUNK, chunk_delay=DELAY))
    answer_tasks(fake, "a", "b")
    outcome = await run_plan(runtime, ListSink(), goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    assert len(requests_of(fake, "a")) == 1 and "another a" not in requests_of(fake, "a")[0].text


async def test_a_task_object_over_the_cap_is_not_started_early_but_runs_with_the_plan(
    fake: FakeLLM, runtime: Runtime
) -> None:
    big = {**task("big"), "description": "read everything " + "x" * 20_000}
    fake.on(system_is(PLANNER), Reply.text(reply(big, task("small"), padding=600), chunk=400, chunk_delay=DELAY))
    answer_tasks(fake, "big", "small")
    outcome = await run_plan(runtime, ListSink(), goal="build it")
    assert outcome.status is PlanStatus.COMPLETED
    (planning,) = planner_requests(fake)
    assert planning.finished is not None
    assert requests_of(fake, "big")[0].started > planning.finished
    assert requests_of(fake, "small")[0].started < planning.finished
    saved = PlanStore(runtime.workspace).load(outcome.saved_id or "").plan
    assert not saved.task("big").started_early and saved.task("small").started_early


@contextlib.contextmanager
def cancel_when(fake: FakeLLM, arrived: Callable[[], bool]) -> Iterator[Callable[[Callable[[], None]], Any]]:
    """A cancel source (as ESC is) that fires once `arrived()` holds."""

    @contextlib.contextmanager
    def watch(cancel: Callable[[], None]) -> Iterator[None]:
        async def poll() -> None:
            while not arrived():
                await asyncio.sleep(0.02)
            cancel()

        poller = asyncio.get_running_loop().create_task(poll())
        try:
            yield
        finally:
            poller.cancel()

    yield watch


async def test_a_cancel_while_the_plan_streams_stops_the_early_tasks_at_once(fake: FakeLLM, runtime: Runtime) -> None:
    text = reply(task("a"), task("b"), padding=100)
    fake.on(system_is(PLANNER), Reply.hang(after_chunks=len(text) // CHUNK - 2, content=text, chunk=CHUNK))
    fake.on(task_is("a"), Reply.hang())
    fake.on(task_is("b"), Reply.hang())
    sink = ListSink()
    with cancel_when(fake, lambda: len(fake.requests) >= 3) as watch:
        outcome = await run_plan(runtime, sink, goal="build it", watch=watch)
    assert outcome.status is PlanStatus.CANCELLED and outcome.exit_code() == 130
    for request in fake.requests:
        assert request.wait_finished(5) and request.disconnected
    assert kinds(sink.events) == ["plan_finished"]


async def test_early_requests_are_held_to_the_plans_token_budget(fake: FakeLLM, workspace: Path) -> None:
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(TEST_KEY),
        base_url=fake.base_url,
        model="fake-model",
        review=False,
        early_start=True,
        max_budget_tokens=1,  # spent by the first request that finishes
    )
    runtime = build_runtime(settings, ListSink())
    try:
        fake.on(system_is(PLANNER), Reply.text(READS_THEN_WRITE, chunk=CHUNK, chunk_delay=DELAY))
        answer_tasks(fake, "a", "b", "w", "v")
        outcome = await run_plan(runtime, ListSink(), goal="build it")
    finally:
        await runtime.aclose()
    assert outcome.status is PlanStatus.FAILED and "budget spent" in (outcome.message() or "")
    # a read may start while the planner's request, not yet counted, streams; once the budget is spent no
    # request starts: no writer, no check
    sent = [tid for tid in ("a", "b", "w", "v") if requests_of(fake, tid)]
    assert set(sent) <= {"a", "b"} and len(fake.requests) == 1 + len(sent)


# ---- a writer's first request, sent early (paicli/plan/prefetch.py) -----------------------------------------


class WatchApproval(ListSink):
    """Records whether `path` exists when `plan_approved` is written."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.existed_at_approval: bool | None = None

    def emit(self, event: AnyEvent) -> None:
        if event.event == "plan_approved":
            self.existed_at_approval = self.path.exists()
        super().emit(event)


WRITE_AFTER_READS = reply(
    task("a"),
    task("w", "FILE_WRITE", ("a",), files=["out.txt"]),
    padding=1200,  # 1.5 s more of stream after the writer's object
)


def script_writer(fake: FakeLLM, content: str) -> None:
    fake.on(all_of(task_is("w"), has_tool_result()), Reply.text("written"), repeat=True)
    fake.on(task_is("w"), Reply.tool_calls([("write_file", {"path": "out.txt", "content": content})]), repeat=True)


async def test_a_writers_early_request_runs_no_tool_call_before_the_plan_is_approved(
    fake: FakeLLM, runtime: Runtime
) -> None:
    fake.on(system_is(PLANNER), Reply.text(WRITE_AFTER_READS, chunk=CHUNK, chunk_delay=DELAY))
    script_writer(fake, "hello")
    answer_tasks(fake, "a")
    out = runtime.workspace / "out.txt"
    sink = WatchApproval(out)
    outcome = await run_plan(runtime, sink, goal="write it")
    assert outcome.status is PlanStatus.COMPLETED
    (planning,) = planner_requests(fake)
    assert planning.finished is not None
    first = requests_of(fake, "w")[0]
    assert first.started < planning.finished and first.finished is not None  # answered while the plan streamed
    assert sink.existed_at_approval is False  # its write_file call waited for the approved plan
    assert out.read_text() == "hello"
    approved = next(e for e in sink.events if e.event == "plan_approved")
    calls = [e for e in sink.events if e.event == "tool_call" and getattr(e, "task_id", None) == "w"]
    assert calls and all(call.ts > approved.ts for call in calls)
    finished = next(e for e in sink.events if isinstance(e, PlanFinished))
    assert finished.requests == len(fake.requests) - 1  # the early request counted once, not asked twice


async def test_a_writer_the_plan_changed_asks_again_and_its_early_reply_is_discarded(
    fake: FakeLLM, runtime: Runtime
) -> None:
    cyclic = reply(task("a", deps=("a2",)), task("w", "FILE_WRITE", files=["out.txt"]), task("a2", deps=("a",)))
    changed = reply(task("a"), {**task("w", "FILE_WRITE", files=["out.txt"]), "description": "do w, but better"})
    fake.on(system_is(PLANNER), Reply.text(cyclic, chunk=CHUNK, chunk_delay=DELAY))
    fake.on(system_is(PLANNER), Reply.text(changed))
    fake.on(all_of(task_is("w"), has_tool_result()), Reply.text("written"), repeat=True)
    fake.on(
        all_of(task_is("w"), last_message_contains("do w, but better")),
        Reply.tool_calls([("write_file", {"path": "out.txt", "content": "new"})]),
    )
    fake.on(task_is("w"), Reply.tool_calls([("write_file", {"path": "out.txt", "content": "old"})]), repeat=True)
    answer_tasks(fake, "a")
    out = runtime.workspace / "out.txt"
    sink = WatchApproval(out)
    outcome = await run_plan(runtime, sink, goal="write it")
    assert outcome.status is PlanStatus.COMPLETED
    early, asked = requests_of(fake, "w")[:2]
    assert "do w, but better" not in early.text and "do w, but better" in asked.text
    assert sink.existed_at_approval is False
    assert out.read_text() == "new"  # the early reply's call never ran
    finished = next(e for e in sink.events if isinstance(e, PlanFinished))
    assert finished.requests == len(fake.requests) - 2  # the discarded early request counts too


async def test_a_writers_early_request_still_running_when_planning_fails_is_closed_and_nothing_written(
    fake: FakeLLM, runtime: Runtime
) -> None:
    cyclic = reply(task("w", "FILE_WRITE", files=["out.txt"]), task("c", deps=("d",)), task("d", deps=("c",)))
    fake.on(system_is(PLANNER), Reply.text(cyclic, chunk=CHUNK, chunk_delay=DELAY), repeat=True)
    fake.on(task_is("w"), Reply.hang(), repeat=True)  # still answering when planning gives up
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="write it")
    assert outcome.status is PlanStatus.FAILED
    early = requests_of(fake, "w")
    assert early  # sent while the plan streamed
    for request in early:
        assert request.wait_finished(5) and request.disconnected
    assert not (runtime.workspace / "out.txt").exists()
    assert kinds(sink.events) == ["plan_finished"]


def test_a_requests_key_leaves_out_its_callbacks_the_meter_and_loop_make_anew_each_call() -> None:
    """A meter passes its own `on_spent` closure on each request: the kept reply must still match (merge of
    the usage of failed requests with early first requests)."""
    from paicli.plan.prefetch import request_key

    messages = [{"role": "user", "content": "do w"}]

    def key() -> str:
        return request_key(messages, {"model": "m", "on_spent": lambda usage: None, "on_text": lambda text: None})

    assert key() == key()
    assert key() != request_key(messages, {"model": "other"})
