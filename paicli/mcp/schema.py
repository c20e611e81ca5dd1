"""An MCP tool made valid for OpenAI function calling: its name and its JSON schema. Pure functions.

Names: `mcp__SERVER__TOOL`, every character outside `[A-Za-z0-9_-]` replaced by `_`; a name longer
than 64 characters is cut and given `_` and 8 hex digits of the SHA-256 of the full name, and so is a
second tool whose name came out the same. Server names cannot contain `__` nor end with `_`, so the
prefix up to the second `__` always names one server (rules such as `mcp__git__*` rely on it).

Schemas: the top level becomes `{"type": "object", "properties": {...}}` (OpenAI refuses anything
else there); below it, keywords providers read reliably are kept and the rest dropped, each dropped
one reported (the server still checks the arguments it gets). Titles, `$schema`, `$id` and `$comment`
are dropped silently: they say nothing about the arguments. Depth is bounded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

MAX_NAME = 64
HASH_DIGITS = 8
MAX_DEPTH = 24
MAX_DESCRIPTION = 2000  # characters of a tool's description sent to the model
KEPT = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "additionalProperties",
        "$ref",
        "$defs",
        "definitions",
        "nullable",
    }
)
SILENT = frozenset({"title", "$schema", "$id", "$comment"})
JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_TOP_LEVEL_REFUSED = ("anyOf", "oneOf", "allOf", "enum", "const", "not")


def tool_names(server: str, tools: Iterable[str]) -> list[str]:
    """The function name of each of a server's tools, in order, all different."""
    taken: set[str] = set()
    names: list[str] = []
    for tool in tools:
        full = f"mcp__{server}__{tool}"
        name = re.sub(r"[^A-Za-z0-9_-]", "_", full)
        salt = 0
        while len(name) > MAX_NAME or name in taken:
            digest = hashlib.sha256(f"{full}\0{salt}".encode()).hexdigest()[:HASH_DIGITS]
            name = re.sub(r"[^A-Za-z0-9_-]", "_", full)[: MAX_NAME - HASH_DIGITS - 1] + "_" + digest
            salt += 1
        taken.add(name)
        names.append(name)
    return names


def function_schema(schema: Any) -> tuple[dict[str, Any], list[str]]:
    """(the schema OpenAI accepts as function parameters, the keywords dropped: `if`, `properties.x.not`)."""
    dropped: list[str] = []
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}, ["(the input schema is not an object)"]
    top = dict(schema)
    for keyword in _TOP_LEVEL_REFUSED:
        if keyword in top:
            top.pop(keyword)
            dropped.append(keyword)
    if top.get("type", "object") != "object":
        dropped.append(f"type {str(top.get('type'))[:20]}")
    top["type"] = "object"
    clean = _clean(top, "", 0, dropped)
    if not isinstance(clean.get("properties"), dict):
        clean["properties"] = {}
    return clean, dropped


def _clean(schema: dict[str, Any], where: str, depth: int, dropped: list[str]) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        dropped.append(f"{where or 'schema'} (nested too deeply)")
        return {}
    clean: dict[str, Any] = {}
    for key, value in schema.items():
        path = f"{where}.{key}" if where else key
        if key in SILENT:
            continue
        if key not in KEPT:
            dropped.append(path)
        elif key in _SCHEMA_MAPS:
            if isinstance(value, dict):
                clean[key] = {
                    name: _sub(sub, f"{path}.{name}", depth, dropped) for name, sub in value.items() if sub is not False
                }
                dropped += [f"{path}.{name} (false)" for name, sub in value.items() if sub is False]
            else:
                dropped.append(path)
        elif key in _SCHEMA_LISTS:
            if isinstance(value, list):
                clean[key] = [_sub(sub, f"{path}.{i}", depth, dropped) for i, sub in enumerate(value)]
            else:
                dropped.append(path)
        elif key == "items":
            if isinstance(value, dict | bool):
                clean[key] = _sub(value, path, depth, dropped)
            else:
                dropped.append(f"{path} (a list of schemas)")
        elif key == "additionalProperties":
            clean[key] = value if isinstance(value, bool) else _sub(value, path, depth, dropped)
        elif key == "type":
            if _valid_type(value):
                clean[key] = value
            else:
                dropped.append(path)
        elif key == "required":
            if isinstance(value, list):
                clean[key] = [name for name in value if isinstance(name, str)]
            else:
                dropped.append(path)
        elif key == "$ref":
            if isinstance(value, str) and value.startswith("#"):
                clean[key] = value
            else:
                dropped.append(f"{path} (not a reference inside the schema)")
        elif key == "description":
            if isinstance(value, str):
                clean[key] = value[:MAX_DESCRIPTION]
        else:
            clean[key] = value
    return clean


def _sub(value: Any, where: str, depth: int, dropped: list[str]) -> Any:
    """A schema in a schema position: `true` (anything) becomes {}; what is no schema is dropped."""
    if value is True:
        return {}
    if isinstance(value, dict):
        return _clean(value, where, depth + 1, dropped)
    dropped.append(f"{where} (not a schema)")
    return {}


def _valid_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in JSON_TYPES
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v in JSON_TYPES for v in value)


def one_line(description: str, limit: int = 120) -> str:
    """The first sentence or line of a description, at most `limit` characters (for the planner's list)."""
    text = " ".join(description.split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"
