"""Hostile planner and reviewer replies: every one is rejected with one clear line, in bounded time and depth.

The pathological inputs that used to take minutes (quadratic scans) run in a child process with a
generous deadline, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from typing import Any

import json_repair
import pytest

from paicli.common.errors import PlanError, ReviewError
from paicli.plan import jsonscan
from paicli.plan.offload import off_loop
from paicli.plan.parse_reply import MAX_ID_CHARS, MAX_REPLY_CHARS, parse_plan_reply
from paicli.plan.review import parse_verdict

ONE_TASK = '{"summary": "s", "tasks": [{"id": "a", "description": "do it"}]}'


def parse(text: str, **options: Any) -> list[str]:
    return parse_plan_reply(text, finish_reason="stop", goal="g", **options).ids()


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


# ---- nesting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '{"tasks": [{"id": "a", "description": "d", "extra": ' + nested(1000) + "}]}",
        '{"tasks": [{"id": "a", "description": "d", "extra": ' + '{"k": ' * 1000 + "1" + "}" * 1000 + "}]}",
        "```json\n" + nested(5000) + "\n```",  # a fenced bare array
        "Here it is: " + "{'a': " * 3000 + "1" + "}" * 3000,  # single quotes: would go to json_repair
        nested(100_000),  # deeper than any recursion limit
    ],
    ids=["arrays-in-a-task", "objects-in-a-task", "fenced", "single-quoted", "100k"],
)
def test_deep_nesting_is_a_clear_error_not_a_recursion_error(reply: str) -> None:
    with pytest.raises(PlanError, match="nested too deeply"):
        parse(reply)


def test_nesting_within_the_limit_and_brackets_inside_strings_are_fine() -> None:
    description = json.dumps("[" * 5000 + "{" * 5000 + "'" + '"')
    extra = nested(jsonscan.MAX_DEPTH - 3)  # {"tasks": [{ is three levels already
    assert parse('{"tasks": [{"id": "a", "description": ' + description + ', "extra": ' + extra + "}]}") == ["a"]
    with pytest.raises(PlanError, match="nested too deeply"):
        parse('{"tasks": [{"id": "a", "description": "d", "extra": ' + nested(jsonscan.MAX_DEPTH - 2) + "}]}")


def test_action_arguments_in_a_string_nested_too_deeply_are_a_problem_named_for_the_task() -> None:
    """The arguments of a direct action, given as a JSON string: the span scan cannot see inside it."""
    args = json.dumps(nested(100_000))
    reply = '{"tasks": [{"id": "a", "description": "d", "action": {"tool": "read_file", "args": ' + args + "}}]}"
    with pytest.raises(PlanError, match='task "a" has "action" arguments nested more than 100 levels deep'):
        parse(reply)


# ---- size and count --------------------------------------------------------------------------------


def test_a_reply_over_the_size_cap_is_refused_with_its_size() -> None:
    reply = ONE_TASK + " " * MAX_REPLY_CHARS
    with pytest.raises(PlanError, match=r"the reply is 1,000,0\d\d characters long, more than the limit of 1,000,000"):
        parse(reply)
    assert parse(ONE_TASK + " " * 100, max_chars=200) == ["a"]


def test_many_candidate_plans_stop_at_the_second(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    real_load = jsonscan.load
    monkeypatch.setattr(jsonscan, "load", lambda span, budget: loaded.append(span) or real_load(span, budget))
    reply = "".join(f'{{"tasks": [{{"id": "t{n}", "description": "d"}}]}}' for n in range(20_000))
    with pytest.raises(PlanError, match="2 different JSON plans"):
        parse(reply)
    assert len(loaded) == 2


def test_too_many_separate_values_are_refused() -> None:
    with pytest.raises(PlanError, match="more than 1,000 separate JSON values"):
        parse("[1] " * 5000 + ONE_TASK)


def test_the_same_plan_repeated_still_counts_once() -> None:
    assert parse(f"{ONE_TASK}\nagain:\n{ONE_TASK}") == ["a"]


def test_an_over_long_task_id_is_refused_and_not_quoted_whole() -> None:
    long_id = "x" * 50_000
    with pytest.raises(PlanError) as caught:
        parse(json.dumps({"tasks": [{"id": long_id, "description": "d"}, {"id": "b", "description": "d"}]}))
    message = str(caught.value)
    assert f"at most {MAX_ID_CHARS}" in message and len(message) < 500
    with pytest.raises(PlanError) as caught:
        parse(json.dumps({"tasks": [{"id": "a", "description": "d", "dependencies": [long_id]}]}))
    assert "which is not a task of this plan" in str(caught.value) and len(str(caught.value)) < 500


# ---- repair ----------------------------------------------------------------------------------------


def test_a_huge_span_that_is_not_strict_json_is_not_repaired(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_repair, "loads", lambda span: pytest.fail("json_repair ran on a huge span"))
    reply = "{'summary': 's', 'tasks': [{'id': 'a', 'description': '" + "x" * 900_000 + "'}]}"
    with pytest.raises(PlanError, match=r"not valid \(.*\) and, at 900,\d+ characters, too long to be repaired"):
        parse(reply)


def test_small_spans_are_still_repaired_until_the_reply_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse("{'tasks': [{'id': 'a', 'description': 'd',},],}") == ["a"]  # single quotes, trailing commas
    repaired: list[int] = []
    real = json_repair.loads
    monkeypatch.setattr(json_repair, "loads", lambda span: repaired.append(len(span)) or real(span))
    junk = "{'note': '" + "y" * 50_000 + "',}"
    with pytest.raises(PlanError, match="too long to be repaired"):
        parse(" ".join([junk] * 6) + ONE_TASK)
    assert sum(repaired) <= jsonscan.REPAIR_BUDGET


def test_a_second_plan_that_could_not_be_read_is_never_guessed_away() -> None:
    unreadable = "{'tasks': [{'id': 'b', 'description': '" + "z" * 70_000 + "'}]}"
    with pytest.raises(PlanError, match="too long to be repaired"):
        parse(ONE_TASK + "\n" + unreadable)


# ---- linear time -----------------------------------------------------------------------------------

PATHOLOGICAL = {
    "unclosed think tags": "'<think>' * 150_000 + ONE",
    "a fence line of spaces": "'```' + ' ' * 400_000 + '!\\n' + ONE",
    "40,000 candidate plans": '\'\'.join(\'{"tasks": [{"id": "t%d"}]}\' % n for n in range(40_000))',
    "500,000 empty objects": "'{}' * 499_000",
    "repair budget spent on many spans": "' '.join(\"{'k': '\" + 'q' * 60_000 + \"',}\" for _ in range(15))",
}


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_pathological_replies_finish_promptly(name: str) -> None:
    script = textwrap.dedent(
        f"""
        from paicli.common.errors import PlanError
        from paicli.plan.parse_reply import parse_plan_reply
        ONE = {ONE_TASK!r}
        try:
            plan = parse_plan_reply({PATHOLOGICAL[name]}, finish_reason="stop", goal="g")
            print("OK", plan.ids())
        except PlanError as error:
            print("REJECTED", error)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("OK ['a']", "REJECTED")), done.stdout
    assert len(done.stdout.splitlines()) == 1


# ---- the reviewer's reply --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 9, "reflection": ' + nested(3000, '"x"') + "}", "nested too deeply"),
        ('{"score": 9, "reflection": "ok"}' + " " * 300_000, "more than the limit of 200,000"),
        ('{"score": 9, "reflection": "ok"} {"score": 2, "reflection": "bad"}', "exactly one JSON object"),
        ('{"score": "' + "9" * 100_000 + 'x", "reflection": "ok"}', '"score" must be a number'),
    ],
    ids=["nested", "huge", "two-verdicts", "huge-score"],
)
def test_hostile_reviewer_replies_are_one_line_review_errors(reply: str, expected: str) -> None:
    with pytest.raises(ReviewError, match=expected) as caught:
        parse_verdict(reply, "stop")
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_a_normal_verdict_still_reads() -> None:
    verdict = parse_verdict('Looks good.\n```json\n{"score": 8.5, "reflection": "done well",}\n```', "stop")
    assert verdict.score == 8.5 and verdict.reflection == "done well"


# ---- off the loop ----------------------------------------------------------------------------------


async def test_a_cancel_does_not_wait_for_the_parse_to_finish() -> None:
    release = threading.Event()
    started = threading.Event()

    def slow() -> str:
        started.set()
        release.wait(30)
        return "late"

    job = asyncio.ensure_future(off_loop(slow))
    while not started.is_set():
        await asyncio.sleep(0.01)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert not release.is_set()  # the work is still running, and the caller is already free
    release.set()


async def test_off_loop_returns_results_and_raises_errors() -> None:
    assert await off_loop(lambda: 41 + 1) == 42
    with pytest.raises(PlanError, match="contains no JSON"):
        await off_loop(lambda: parse_plan_reply("no json here", finish_reason="stop", goal="g"))
