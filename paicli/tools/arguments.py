"""A tool call's arguments as the model sent them: one parser for the tool box and the agent loop.

The text is untrusted: before it is parsed, one linear scan bounds how deeply its arrays and objects nest
(`MAX_DEPTH`), because `json.loads` recurses once per level and 100,000 `[` would end paicli with a
RecursionError (caught too, as a second line of defence). Too deep is a tool error like any bad call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from paicli.common.sanitize import well_formed_json

MAX_DEPTH = 100  # levels of [ and { in one call's arguments; a tool's schema needs a handful
TOO_DEEP = f"the arguments are nested too deeply (more than {MAX_DEPTH} levels of [ and {{); send a flat JSON object"
_STRUCTURE = re.compile(r'["\[\]{}]')
_STRINGS = json.JSONDecoder()  # at a quote, it reads that one string as the parser would, in C


class BadArguments(Exception):
    """The arguments are not one JSON object; the message says what they are instead."""


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """The call's arguments as a dict: empty text or `null` is `{}`, a JSON string holding an object is
    unwrapped (some models encode the object twice: "{\\"path\\": \\"a.py\\"}"). BadArguments otherwise."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = _load(raw)
    except json.JSONDecodeError as error:
        raise BadArguments(f"the arguments are not valid JSON ({error}); send one JSON object") from None
    if isinstance(value, str):
        try:
            value = _load(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise BadArguments("the arguments are a JSON string, not a JSON object") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadArguments(f"the arguments must be a JSON object, not {json_kind(value)}")
    return value


def nested_deeper_than(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text opens more than `limit` arrays or objects inside each other, counting the
    brackets outside strings as the parser reads them (the parser itself skips each string). Linear
    in the length; stops at the first level over, or where the text stops being JSON (the parser would)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # most calls: no scan needed
    depth, position = 0, 0
    while (found := _STRUCTURE.search(text, position)) is not None:
        char, position = found.group(), found.end()
        if char == '"':
            try:
                position = _STRINGS.raw_decode(text, found.start())[1]
            except ValueError:  # unterminated, or a control character: invalid JSON from here
                return False
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
            if depth < 0:  # a stray closer: invalid JSON from here
                return False
    return False


def _load(text: str) -> Any:
    """json.loads, bounded in depth: BadArguments (TOO_DEEP) rather than a RecursionError."""
    if nested_deeper_than(text):
        raise BadArguments(TOO_DEEP)
    try:
        return well_formed_json(json.loads(text))
    except RecursionError:  # the scan bounds the depth; this is a second line of defence
        raise BadArguments(TOO_DEEP) from None


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
