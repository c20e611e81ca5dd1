"""The application layer drives turns and plans for both front ends: cancel at any moment, outcomes with
exit codes, and nothing left running behind a cancelled caller. Real client, real fake server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_plan, run_turn, until_done
from paicli.common.events import CommandOutput, Event, ListSink, ModelUsage, PlanFinished, TextDelta, ToolResultEvent
from paicli.common.values import Usage
from paicli.config import Settings
from paicli.llm.tokens import estimate_prompt, estimate_text
from paicli.plan.model import PlanStatus
from paicli.runtime import Runtime, build_runtime
from paicli.tools.toolbox import data_marker
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, any_request, has_tool_result, no_tools
from tests.plan_script import PLANNER, plan_json, requests_of, system_is, task_is

E = TypeVar("E", bound=Event)


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


async def test_a_plan_cancelled_after_its_planner_replied_keeps_every_requests_tokens(
    fake: FakeLLM, runtime: Runtime
) -> None:
    """Issue 32: ESC during a plan whose planner request had completed showed the plan at 0 in /usage. The
    planner's reply and the task request cut by the cancel (its prompt and what had streamed) both count."""
    planned = {"prompt_tokens": 1771, "completion_tokens": 20}
    fake.on(system_is(PLANNER), Reply.text(plan_json({"t1": []}), usage=planned))
    fake.on(task_is("t1"), Reply.hang(after_chunks=2, content="thinking about it"))

    @contextlib.contextmanager
    def cancel_when_the_task_streams(cancel: Callable[[], None]) -> Iterator[None]:
        async def watch() -> None:
            while not sink.of_type(TextDelta):
                await asyncio.sleep(0.01)
            cancel()

        watcher = asyncio.create_task(watch())
        try:
            yield
        finally:
            watcher.cancel()

    sink = Sink()
    outcome = await run_plan(runtime, sink, goal="think", watch=cancel_when_the_task_streams)
    assert outcome.status is PlanStatus.CANCELLED and outcome.exit_code() == 130
    task_request = requests_of(fake, "t1")[0].body
    streamed = "".join(delta.text for delta in sink.of_type(TextDelta))
    cut = estimate_prompt(task_request["messages"], task_request.get("tools")) + estimate_text(streamed)
    assert outcome.usage.prompt_tokens + outcome.usage.completion_tokens == 1771 + 20 + cut
    assert outcome.usage.estimated  # the cut request's part is paicli's estimate, and says so
    (finished,) = sink.of_type(PlanFinished)
    assert finished.usage == outcome.usage
    shown = sum((e.usage for e in sink.of_type(ModelUsage)), Usage())  # what the toolbar and /usage add up
    assert shown.total == outcome.usage.total


class Sink(ListSink):
    def of_type(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]


async def test_a_cancelled_commands_output_so_far_is_shown_and_kept_in_the_conversation(
    fake: FakeLLM, runtime: Runtime
) -> None:
    """Issue 32: ESC during a command lost what it had printed; the turn's round now ends with it."""
    command = "echo first words; sleep 30; echo never"
    fake.on("run it", Reply.tool_calls([("execute_command", {"command": command}), ("read_file", {"path": "a"})]))

    @contextlib.contextmanager
    def cancel_once_it_printed(cancel: Callable[[], None]) -> Iterator[None]:
        async def watch() -> None:
            while "first words" not in "".join(e.text for e in sink.of_type(CommandOutput)):
                await asyncio.sleep(0.01)
            cancel()

        watcher = asyncio.create_task(watch())
        try:
            yield
        finally:
            watcher.cancel()

    sink = Sink()
    turn = await run_turn(runtime, sink, start("run it"), watch=cancel_once_it_printed)
    assert turn.cancelled
    (shown,) = sink.of_type(ToolResultEvent)
    assert not shown.ok and shown.output == "first words\n[cancelled by the user]"
    assert [m["role"] for m in turn.messages] == ["system", "user", "assistant", "tool", "tool"]
    ran, not_run = turn.messages[3]["content"], turn.messages[4]["content"]
    assert ran == data_marker("execute_command") + "first words\n[cancelled by the user]"
    assert not_run == "[cancelled by the user]"  # the read after it never ran


async def test_a_turn_warms_the_workspaces_listing_while_the_model_thinks(fake: FakeLLM, runtime: Runtime) -> None:
    import subprocess

    (runtime.workspace / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=runtime.workspace, check=True)
    fake.on("hello", Reply.text("Hello."))
    turn = await run_turn(runtime, ListSink(), start("hello"))
    assert turn.exit_code() == 0
    runtime.listings.settle()
    assert runtime.listings.made == 1, "no listing was made for the turn's searches"
