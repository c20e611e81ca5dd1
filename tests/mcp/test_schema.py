"""MCP tool names and schemas made valid for OpenAI function calling (paicli/mcp/schema.py)."""

from __future__ import annotations

import re

from paicli.mcp.schema import MAX_NAME, function_schema, one_line, tool_names

VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_names_are_namespaced_and_characters_outside_the_set_become_underscores() -> None:
    assert tool_names("git", ["git_status", "read.file", "a b/c"]) == [
        "mcp__git__git_status",
        "mcp__git__read_file",
        "mcp__git__a_b_c",
    ]


def test_a_long_name_is_cut_with_a_hash_suffix_and_stays_stable() -> None:
    long = "x" * 100
    (name,) = tool_names("srv", [long])
    assert len(name) == MAX_NAME and VALID.fullmatch(name)
    assert name.startswith("mcp__srv__xxx") and re.search(r"_[0-9a-f]{8}$", name)
    assert tool_names("srv", [long]) == [name]
    assert tool_names("srv", [long + "y"]) != [name]  # another tool, another suffix


def test_duplicates_after_sanitizing_get_a_suffix_and_the_first_keeps_its_name() -> None:
    names = tool_names("s", ["a.b", "a_b", "a b", "a.b"])
    assert names[0] == "mcp__s__a_b"
    assert len(set(names)) == 4 and all(VALID.fullmatch(n) for n in names)


def test_the_top_level_becomes_an_object_and_refused_keywords_are_dropped() -> None:
    schema, dropped = function_schema({"type": "string", "oneOf": [{"type": "string"}]})
    assert schema == {"type": "object", "properties": {}}
    assert "oneOf" in dropped and any(d.startswith("type") for d in dropped)
    schema, dropped = function_schema("not a schema")
    assert schema == {"type": "object", "properties": {}} and dropped


def test_unsupported_keywords_are_dropped_and_reported_titles_silently() -> None:
    schema, dropped = function_schema(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "q": {"type": "string", "title": "Q", "examples": ["a"], "pattern": "^a", "if": {}, "then": {}},
                "n": {"type": ["integer", "null"], "minimum": 0},
                "bad": {"type": "nonsense"},
                "gone": False,
                "any": True,
                "ref": {"$ref": "#/$defs/X"},
                "far": {"$ref": "https://example.com/schema.json"},
            },
            "patternProperties": {"^x-": {"type": "string"}},
            "$defs": {"X": {"type": "object", "not": {"required": ["y"]}}},
            "required": ["q", 3],
        }
    )
    assert schema["properties"]["q"] == {"type": "string", "pattern": "^a"}
    assert schema["properties"]["n"] == {"type": ["integer", "null"], "minimum": 0}
    assert schema["properties"]["bad"] == {} and "gone" not in schema["properties"]
    assert schema["properties"]["any"] == {} and schema["properties"]["ref"] == {"$ref": "#/$defs/X"}
    assert schema["$defs"]["X"] == {"type": "object"} and schema["required"] == ["q"]
    assert "title" not in str(schema) and "$schema" not in schema
    for path in (
        "properties.q.examples",
        "properties.q.if",
        "properties.q.then",
        "properties.bad.type",
        "patternProperties",
        "$defs.X.not",
    ):
        assert path in dropped, path
    assert any(d.startswith("properties.far.$ref") for d in dropped)
    assert not any("title" in d or "$schema" in d for d in dropped)


def test_depth_is_bounded() -> None:
    deep: dict[str, object] = {"type": "string"}
    for _ in range(100):
        deep = {"type": "object", "properties": {"x": deep}}
    schema, dropped = function_schema(deep)
    assert any("nested too deeply" in d for d in dropped)
    assert len(str(schema)) < 4000


def test_one_line_is_the_first_sentence() -> None:
    assert one_line("Add two integers. Returns their sum.") == "Add two integers."
    assert one_line("a\nb  c") == "a b c"
    assert len(one_line("x" * 500)) == 120
