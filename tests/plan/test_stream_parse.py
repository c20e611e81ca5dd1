"""The streamed planner reply, read as it arrives: every task of the whole parse, each as soon as its
object is complete, however the reply is cut into pieces; hostile replies in linear work."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from paicli.plan import jsonscan
from paicli.plan.model import Task
from paicli.plan.parse_reply import parse_plan_reply
from paicli.plan.stream_parse import MAX_TASK_CHARS, StreamParser
from tests.plan.corpus import THREE, Accept, Case, plan_json, task
from tests.plan.corpus_contract import EVERY_CASE

ACCEPTED = [case for case in EVERY_CASE if isinstance(case.expect, Accept) and len(case.reply) < 20_000]


def specs(tasks: list[Task]) -> list[dict[str, object]]:
    return [t.spec() for t in tasks]


def whole(case: Case) -> list[dict[str, object]]:
    plan = parse_plan_reply(
        case.reply,
        finish_reason=case.finish_reason,
        goal="g",
        max_tasks=case.max_tasks,
        external_ids=case.external_ids,
    )
    return specs(plan.tasks)


def streamed(case: Case, pieces: list[str]) -> tuple[list[dict[str, object]], StreamParser]:
    parser = StreamParser(external_ids=case.external_ids, max_tasks=case.max_tasks)
    found: list[Task] = []
    for piece in pieces:
        found += parser.feed(piece)
    return specs(found), parser


def test_the_corpus_has_the_lenient_forms() -> None:
    names = {case.name for case in ACCEPTED}
    for form in ("json fence", "trailing commas", "single quotes", "comments in the json", "tasks keyed by id"):
        assert form in names
    assert len(ACCEPTED) > 70


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda case: case.name)
def test_every_accepted_reply_streams_the_tasks_of_the_whole_parse(case: Case) -> None:
    expected = whole(case)
    assert streamed(case, [case.reply])[0] == expected
    assert streamed(case, list(case.reply))[0] == expected  # one character a piece


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda case: case.name)
def test_a_reply_split_at_every_boundary_streams_the_same_tasks(case: Case) -> None:
    """Every boundary of the short replies; of the longer ones, every n-th (about 300 cuts each)."""
    expected = whole(case)
    for cut in range(1, len(case.reply), max(1, len(case.reply) // 300)):
        assert streamed(case, [case.reply[:cut], case.reply[cut:]])[0] == expected, cut


def test_a_reply_split_at_every_byte_boundary_of_its_utf8_reads_the_same() -> None:
    """Pieces as a decoder hands them over: a multi-byte character never split, so every boundary of the
    UTF-8 bytes that is a character boundary."""
    reply = plan_json(task("a", "Übersetze — 日本語 ✓ {x}", "FILE_READ"), task("b", "ß [y]", deps=["a"]))
    data = reply.encode()
    expected = [("a", "FILE_READ"), ("b", "ANALYSIS")]
    for cut in range(1, len(data)):
        try:
            head, tail = data[:cut].decode(), data[cut:].decode()
        except UnicodeDecodeError:
            continue
        parser = StreamParser()
        got = parser.feed(head) + parser.feed(tail)
        assert [(t.id, t.type.value) for t in got] == expected


def test_a_task_comes_out_with_the_piece_that_closes_its_object() -> None:
    end_of_first = THREE.index("}") + 1  # the first task object's closing brace
    parser = StreamParser()
    assert parser.feed(THREE[: end_of_first - 1]) == []
    first = parser.feed(THREE[end_of_first - 1 : end_of_first])
    assert [t.id for t in first] == ["task_1"]
    assert [t.id for t in parser.feed(THREE[end_of_first:])] == ["task_2", "task_3"]


def test_an_incomplete_or_invalid_object_is_not_yielded() -> None:
    parser = StreamParser()
    reply = plan_json(
        task("a", ""), {"description": "no id"}, task("c", "fine"), {"id": "d", "description": "x", "files": 7}
    )
    assert [t.id for t in parser.feed(reply)] == ["c"]
    assert any('empty "description"' in problem for problem in parser.problems)
    assert [t.id for t in StreamParser().feed(THREE[: THREE.index("task_2") + 30])] == ["task_1"]


def test_a_repeated_id_is_yielded_once_and_noted_when_its_spec_differs() -> None:
    parser = StreamParser()
    same = plan_json(task("a", "x"), task("a", "x"))
    assert [t.id for t in parser.feed(same)] == ["a"]
    assert parser.repeated == []
    other = StreamParser()
    assert [t.description for t in other.feed(plan_json(task("a", "x"), task("a", "y")))] == ["x"]
    assert other.repeated == ["a"]


def test_a_task_object_over_the_cap_is_skipped_and_the_next_one_still_comes() -> None:
    reply = plan_json(task("big", "y" * (MAX_TASK_CHARS + 10)), task("small", "fine"), indent=None)
    parser = StreamParser()
    got: list[Task] = []
    for start in range(0, len(reply), 97):
        got += parser.feed(reply[start : start + 97])
    assert [t.id for t in got] == ["small"]
    assert any("over 16,000 characters" in problem for problem in parser.problems)
    assert parser.scanned <= len(reply) + 10 * (len(reply) // 97 + 1)


def test_thinking_is_skipped_and_a_lone_closing_tag_starts_afresh() -> None:
    reply = '<think>maybe {"tasks": [{"id": "x", "description": "draft"}]}</think>\n' + THREE
    assert [t.id for t in StreamParser().feed(reply)] == ["task_1", "task_2", "task_3"]
    cut = [reply[i : i + 3] for i in range(0, len(reply), 3)]
    parser = StreamParser()
    assert [t.id for piece in cut for t in parser.feed(piece)] == ["task_1", "task_2", "task_3"]
    lone = "I will read [the user's file first</think>\n" + THREE  # thinking streamed as text (Qwen3.5)
    assert [t.id for t in StreamParser().feed(lone)] == ["task_1", "task_2", "task_3"]


def test_a_fence_in_another_language_is_skipped_and_a_json_fence_read() -> None:
    reply = "```bash\nls [ {\n```\n```json\n" + THREE + "\n```\n"
    for size in (1, 2, 5, 1000):
        parser = StreamParser()
        got = [t.id for start in range(0, len(reply), size) for t in parser.feed(reply[start : start + size])]
        assert got == ["task_1", "task_2", "task_3"], size


def test_at_most_max_tasks_are_yielded() -> None:
    reply = plan_json(*(task(f"t{i}", "x") for i in range(60)))
    assert len(StreamParser(max_tasks=50).feed(reply)) == 50


# ---- hostile replies: linear work, bounded memory ---------------------------------------------------

HOSTILE = {
    "deep arrays": "[" * 200_000,
    "deep objects": '{"tasks": [{"a": ' + '{"k": ' * 100_000,
    "unterminated string": '{"tasks": [{"id": "a", "description": "' + "x" * 200_000,
    "escapes": '{"tasks": [{"id": "a", "description": "' + "\\" * 200_001,
    "open comment": '{"tasks": [/* ' + "*" * 200_000,
    "fence lines": "```\n" * 50_000,
    "think tags": "<thi" * 50_000,
    "many tiny objects": '{"tasks": [' + "{}," * 60_000,
    "many tasks": '{"tasks": [' + '{"id": 1, "description": "x"},' * 6_000,
    "many keys": '{"summary": ' + '"k": 1, ' * 30_000,
    "quotes in a task": '{"tasks": [{"id": "a", "d": ' + "'\"" * 100_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_replies_in_one_character_pieces_take_linear_work(name: str) -> None:
    reply = HOSTILE[name]
    parser = StreamParser()
    for char in reply[:30_000]:  # one character a piece: the worst cut for held text
        parser.feed(char)
    assert parser.scanned <= 30_000 * 7  # every character scanned a bounded number of times
    whole_reply = StreamParser()
    whole_reply.feed(reply)
    assert whole_reply.scanned <= len(reply) + 16
    assert len(whole_reply.tasks) <= 1  # "many tasks" holds one valid task, given again and again


def test_nesting_past_the_limit_ends_the_preview() -> None:
    parser = StreamParser()
    parser.feed('{"tasks": [{"id": "a", "description": "x", "e": ' + "[" * (jsonscan.MAX_DEPTH + 5))
    assert any("nested too deeply" in problem for problem in parser.problems)
    assert parser.feed("]" * 100 + ', {"id": "b", "description": "y"}]}') == []


def test_a_megabyte_of_hostile_pieces_finishes_promptly() -> None:
    """In a child process with a generous deadline, so a quadratic regression fails instead of hanging."""
    script = textwrap.dedent(
        """
        from paicli.plan.stream_parse import StreamParser
        for reply in ('{"tasks": [{"id": "a", "description": "' + "x" * 1_000_000, "[" * 1_000_000,
                      '{"tasks": [' + '{"id": "a", "description": "' + "y" * 1_000_000 + '"}]}',
                      '{"tasks": [' + '{"id": 1},' * 100_000, '{"summary": "' + '", "' * 200_000):
            parser = StreamParser()
            for start in range(0, len(reply), 40):
                parser.feed(reply[start : start + 40])
            assert parser.tasks == [], parser.tasks
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_tokens_are_estimated_as_the_client_estimates_a_completion() -> None:
    from paicli.llm.tokens import estimate_text

    reply = plan_json(task("a", "Übersetze 日本語"))
    parser = StreamParser()
    for char in reply:
        parser.feed(char)
    assert parser.tokens == estimate_text(reply)
    assert json.loads(reply)["tasks"][0]["id"] == "a"
