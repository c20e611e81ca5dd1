"""A tool call's arguments as the model sent them: one parser for the tool box and the agent loop."""

from __future__ import annotations

import json
from typing import Any


class BadArguments(Exception):
    """The arguments are not one JSON object; the message says what they are instead."""


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """The call's arguments as a dict: empty text or `null` is `{}`, a JSON string holding an object is
    unwrapped (some models encode the object twice: "{\\"path\\": \\"a.py\\"}"). BadArguments otherwise."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise BadArguments(f"the arguments are not valid JSON ({error}); send one JSON object") from None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise BadArguments("the arguments are a JSON string, not a JSON object") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadArguments(f"the arguments must be a JSON object, not {json_kind(value)}")
    return value


def arguments_or_raw(raw: str | None) -> dict[str, Any] | str:
    """The arguments when they parse as an object, else the raw text (what events show of a bad call)."""
    try:
        return parse_arguments(raw)
    except BadArguments:
        return raw or ""


def json_kind(value: object) -> str:
    """`a string`, `an array`, `null`, ...: what a JSON value is, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
