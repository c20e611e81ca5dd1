"""One parser for a tool call's arguments, as every model sends them."""

from __future__ import annotations

import pytest

from paicli.tools.arguments import BadArguments, arguments_or_raw, json_kind, parse_arguments


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
