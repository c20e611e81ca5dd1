"""Event-stream decoding and the folding of chunks into one reply, independent of HTTP."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paicli.common.errors import ModelProtocolError
from paicli.llm.replies import whole_reply
from paicli.llm.sse import ReplyAssembler, SSEDecoder

STREAM = (
    ": comment\r\n\r\n"
    'data: {"a": 1}\n\n'
    "event: ignored\ndata: line one\ndata: line two\r\n\r\n"
    "data:no-space\r\rdata: [DONE]"
)
EVENTS = ['{"a": 1}', "line one\nline two", "no-space", "[DONE]"]


def _decode(pieces: list[str]) -> list[str]:
    decoder = SSEDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    return events + decoder.close()


def test_events_are_split_on_blank_lines_of_any_line_ending() -> None:
    assert _decode([STREAM]) == EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_of_the_stream_gives_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    assert _decode([STREAM[a:b] for a, b in itertools.pairwise(bounds)]) == EVENTS


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"choices": choices, **extra}


def test_tool_names_streamed_in_pieces_are_joined_and_repeats_ignored() -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_"}}]}))
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "function": {"name": "file", "arguments": "{}"}}]}))
    assembler.feed(_chunk({"tool_calls": [{"index": 1, "id": "d", "function": {"name": "list_dir"}}]}))
    assembler.feed(_chunk({"tool_calls": [{"index": 1, "id": "d", "function": {"name": "list_dir"}}]}))
    reply = assembler.result()
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c", "read_file", "{}"),
        ("d", "list_dir", "{}"),
    ]


def test_arguments_sent_as_an_object_are_encoded() -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"x": 1}}}]}, "stop"))
    assert json.loads(assembler.result().tool_calls[0].arguments) == {"x": 1}


def test_usage_in_a_chunk_with_choices_is_kept() -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"content": "hi"}, "stop", usage={"prompt_tokens": 3, "completion_tokens": 1}))
    assert assembler.result().usage.total == 4


def test_started_only_after_real_content() -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"role": "assistant", "content": ""}))
    assert not assembler.started
    assembler.feed(_chunk({"content": "x"}))
    assert assembler.started


def test_a_complete_tool_call_with_finish_reason_length_is_accepted() -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]}))
    assembler.feed(_chunk({}, "length"))
    assert assembler.result().finish_reason == "length"


@pytest.mark.parametrize("data", ["{oops", "[1, 2]", '"text"'])
def test_chunks_that_are_not_json_objects_are_protocol_errors(data: str) -> None:
    with pytest.raises(ModelProtocolError):
        ReplyAssembler().feed_json(data)


@pytest.mark.parametrize(("sent", "counted"), [(7, 7), ("12", 12), (3.0, 3), (None, 0), ("many", 0), (-5, 0)])
def test_odd_usage_values_never_crash(sent: object, counted: int) -> None:
    assembler = ReplyAssembler()
    assembler.feed(_chunk({"content": "x"}, "stop", usage={"prompt_tokens": sent, "completion_tokens": 1}))
    assert assembler.result().usage.prompt_tokens == counted


# ---- JSON nested too deeply to read (issue 27, finding 2) -----------------------------------------------


def _call_chunk(arguments: str, finish: str = "tool_calls") -> str:
    """A stream chunk whose tool call carries `arguments` as JSON text (not as a JSON string)."""
    call = '{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": ' + arguments + "}}"
    return '{"choices": [{"index": 0, "delta": {"tool_calls": [' + call + ']}, "finish_reason": "' + finish + '"}]}'


def test_a_chunk_nested_too_deeply_is_a_protocol_error_not_a_crash() -> None:
    with pytest.raises(ModelProtocolError, match="stream chunk that is nested too deeply to read"):
        ReplyAssembler().feed_json(_call_chunk("[" * 100_000 + "]" * 100_000))


def test_a_non_streamed_reply_nested_too_deeply_is_a_protocol_error_not_a_crash() -> None:
    with pytest.raises(ModelProtocolError, match="JSON nested too deeply to read"):
        whole_reply('{"choices": [{"message": ' + "[" * 100_000 + "]" * 100_000 + "}]}", ReplyAssembler())


def test_deep_arguments_in_a_string_pass_through_for_the_tool_box_to_refuse() -> None:
    """The usual wire format: the arguments are a JSON string, whatever it holds; cut off at the token limit
    or not, the reply is read and the tool box answers the model (tests/test_headless_run.py)."""
    deep = "[" * 100_000 + "]" * 100_000
    for finish in ("tool_calls", "length"):
        assembler = ReplyAssembler()
        assembler.feed_json(_call_chunk(json.dumps(deep), finish))
        assert assembler.result().tool_calls[0].arguments == deep
