"""One parser for a tool call's arguments, as every model sends them."""

from __future__ import annotations

import json

import pytest

from paicli.tools.arguments import (
    MAX_DEPTH,
    TOO_DEEP,
    BadArguments,
    arguments_or_raw,
    json_kind,
    nested_deeper_than,
    parse_arguments,
)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("", {}),
        ("   ", {}),
        (None, {}),
        ("null", {}),
        ('{"path": "a.py"}', {"path": "a.py"}),
        ('"{\\"path\\": \\"a.py\\"}"', {"path": "a.py"}),  # encoded twice
        ('""', {}),
    ],
)
def test_objects_in_every_shape_models_send(raw: str | None, parsed: dict[str, object]) -> None:
    assert parse_arguments(raw) == parsed
    assert arguments_or_raw(raw) == parsed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"path": ', "not valid JSON"),
        ("[1, 2]", "not an array"),
        ("42", "not a number"),
        ("true", "not a boolean"),
        ('"just text"', "a JSON string, not a JSON object"),
        ('"[1]"', "not an array"),
    ],
)
def test_anything_else_is_refused_with_what_it_is(raw: str, message: str) -> None:
    with pytest.raises(BadArguments, match=message):
        parse_arguments(raw)
    assert arguments_or_raw(raw) == raw  # events show the model's own text


def test_json_kinds() -> None:
    kinds = [json_kind(v) for v in (None, True, 1, 1.5, "s", [], {}, object())]
    assert kinds == ["null", "a boolean", "a number", "a number", "a string", "an array", "an object", "object"]


# ---- nesting: a tool error, never a RecursionError (issue 27, finding 2) ------------------------------


def arrays(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def objects(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize(
    "raw",
    [
        arrays(100_000),
        objects(100_000),
        '{"path": ' + arrays(100_000) + "}",
        "[" * 100_000,  # cut off: never closed
        '{"a": [{"b": ' * 50_000,  # arrays and objects in turn
        json.dumps(arrays(100_000)),  # encoded twice: the string holds the nesting
        arrays(1_000),  # under the interpreter's recursion limit, still far over paicli's
    ],
    ids=["arrays", "objects", "in-a-value", "unclosed", "mixed", "encoded-twice", "1000"],
)
def test_arguments_nested_too_deeply_are_refused_in_one_line(raw: str) -> None:
    with pytest.raises(BadArguments) as refused:
        parse_arguments(raw)
    assert str(refused.value) == TOO_DEEP
    assert f"more than {MAX_DEPTH} levels" in TOO_DEEP and "\n" not in TOO_DEEP
    assert arguments_or_raw(raw) == raw  # the tool_call event shows the model's own text


def test_brackets_inside_strings_do_not_count() -> None:
    content = "[" * 100_000 + '{ \\" [[[ \\\\ ' + "{" * 100_000  # escaped quotes and backslashes inside
    raw = json.dumps({"path": "a.txt", "content": content})
    assert parse_arguments(raw) == {"path": "a.txt", "content": content}
    assert not nested_deeper_than(raw)


def test_a_string_ends_at_its_closing_quote_after_an_escaped_backslash() -> None:
    raw = '{"a": "x\\\\", "b": ' + arrays(MAX_DEPTH) + "}"  # "x\\" ends there: the brackets after it count
    assert nested_deeper_than(raw)
    with pytest.raises(BadArguments, match="nested too deeply"):
        parse_arguments(raw)


def test_just_under_and_just_over_the_limit() -> None:
    at_limit = '{"a": ' + arrays(MAX_DEPTH - 1, "1") + "}"  # the object is one level, the arrays the rest
    assert parse_arguments(at_limit)["a"] == json.loads(arrays(MAX_DEPTH - 1, "1"))
    over = '{"a": ' + arrays(MAX_DEPTH, "1") + "}"
    with pytest.raises(BadArguments, match="nested too deeply"):
        parse_arguments(over)
    with pytest.raises(BadArguments, match="not an array"):  # deep enough, but no object
        parse_arguments(arrays(MAX_DEPTH))
    with pytest.raises(BadArguments, match="nested too deeply"):
        parse_arguments(arrays(MAX_DEPTH + 1))


@pytest.mark.parametrize(
    ("text", "deeper"),
    [
        ("", False),
        ("[" * 200, True),
        ('"' + "[" * 200 + '"', False),
        ('"' + "[" * 200, False),  # an unterminated string: the parser stops at its quote
        ("]" + "[" * 200, False),  # a stray closer: the parser stops there
        ("[]" * 200, False),  # many, side by side
        ('["a\\"]", ' + "[" * 200, True),  # an escaped quote does not end the string
    ],
)
def test_the_depth_is_counted_as_the_parser_reads(text: str, deeper: bool) -> None:
    assert nested_deeper_than(text) is deeper
