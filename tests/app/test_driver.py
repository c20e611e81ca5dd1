"""The application layer drives turns and plans for both front ends: cancel at any moment, outcomes with
exit codes, and nothing left running behind a cancelled caller. Real client, real fake server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_plan, run_turn, until_done
from paicli.common.events import ListSink
from paicli.config import Settings
from paicli.plan.model import PlanStatus
from paicli.runtime import Runtime, build_runtime
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, any_request, has_tool_result, no_tools


@pytest.fixture
async def runtime(fake: FakeLLM, workspace: Path) -> AsyncIterator[Runtime]:
    settings = Settings(
        workspace=workspace,
        api_key=SecretStr(TEST_KEY),
        base_url=fake.base_url,
        model="fake-model",
        max_attempts=1,
        review=False,
    )
    runtime = build_runtime(settings, ListSink())
    yield runtime
    await runtime.aclose()


def start(text: str) -> list[dict[str, object]]:
    return [{"role": "system", "content": "rules"}, {"role": "user", "content": text}]


async def test_a_turn_that_answers_keeps_the_whole_conversation(fake: FakeLLM, runtime: Runtime) -> None:
    (runtime.workspace / "a.txt").write_text("hello\n")
    fake.on(has_tool_result("read_file"), Reply.text("It says hello."))
    fake.on("what is in a.txt", Reply.tool_calls([("read_file", {"path": "a.txt"})]))
    turn = await run_turn(runtime, ListSink(), start("what is in a.txt"))
    assert turn.exit_code() == 0 and turn.result is not None and turn.result.content == "It says hello."
    assert [m["role"] for m in turn.messages] == ["system", "user", "assistant", "tool", "assistant"]


async def test_a_failed_turn_keeps_only_its_answered_part_and_exits_1(fake: FakeLLM, runtime: Runtime) -> None:
    (runtime.workspace / "a.txt").write_text("hello\n")
    fake.on(has_tool_result("read_file"), Reply.error(400, "context too long"))
    fake.on("read a.txt", Reply.tool_calls([("read_file", {"path": "a.txt"})]))
    turn = await run_turn(runtime, ListSink(), start("read a.txt"))
    assert turn.result is None and turn.error is not None and "context too long" in str(turn.error)
    assert turn.exit_code() == 1
    # the answered tool round stays, so the next request is consistent
    assert [m["role"] for m in turn.messages] == ["system", "user", "assistant", "tool"]


async def test_the_cancel_source_stops_a_turn_at_once(fake: FakeLLM, runtime: Runtime) -> None:
    fake.on("wait forever", Reply.hang())

    @contextlib.contextmanager
    def cancel_soon(cancel: Callable[[], None]) -> Iterator[None]:
        handle = asyncio.get_running_loop().call_later(0.2, cancel)
        try:
            yield
        finally:
            handle.cancel()

    turn = await run_turn(runtime, ListSink(), start("wait forever"), watch=cancel_soon)
    assert turn.cancelled and turn.exit_code() == 130 and turn.messages == start("wait forever")[:1]
    assert fake.requests[0].wait_finished(5) and fake.requests[0].disconnected


async def test_a_cancelled_caller_cancels_the_work_before_it_returns() -> None:
    finished: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            finished.append("cleaned up")

    caller = asyncio.create_task(until_done(work()))
    await asyncio.sleep(0.05)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert finished == ["cleaned up"]


async def test_a_plan_whose_planning_fails_is_a_failed_outcome(fake: FakeLLM, runtime: Runtime) -> None:
    fake.on(no_tools, Reply.text("I would rather not plan."), repeat=True)
    sink = ListSink()
    outcome = await run_plan(runtime, sink, goal="do something")
    assert outcome.status is PlanStatus.FAILED and outcome.plan is None and outcome.exit_code() == 1
    assert outcome.message() and "plan" in outcome.message().lower()
    assert [e.event for e in sink.events][-1] == "plan_finished"


async def test_a_plan_that_cannot_be_saved_is_a_failed_outcome_not_a_crash(
    fake: FakeLLM, runtime: Runtime, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (runtime.workspace / ".paicli").symlink_to(elsewhere, target_is_directory=True)
    fake.on(no_tools, Reply.text('{"summary": "s", "tasks": [{"id": "a", "description": "say hi"}]}'))
    fake.on(any_request, Reply.text("hi"), repeat=True)
    outcome = await run_plan(runtime, ListSink(), goal="greet")
    assert outcome.status is PlanStatus.FAILED and outcome.exit_code() in (1, 2)
    assert "save" in (outcome.message() or "")
    assert list(elsewhere.iterdir()) == []  # nothing written through the symlink
