"""An MCP tool as a paicli Tool: its facts, its arguments, and what its results become for the model."""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest

from paicli.mcp.tool import make_tool, render_result
from paicli.tools.base import Effect, ToolFailure


async def never(name: str, arguments: dict[str, Any]) -> Any:
    raise AssertionError("not called")


def remote(read_only: bool | None = None, schema: dict[str, Any] | None = None) -> types.Tool:
    annotations = types.ToolAnnotations(read_only_hint=read_only) if read_only is not None else None
    return types.Tool(
        name="look",
        description="Look things up. Slowly.",
        annotations=annotations,
        input_schema=schema or {"type": "object", "properties": {"q": {"type": "string"}}},
    )


@pytest.mark.parametrize(
    ("trust", "hint", "effect"),
    [
        (False, True, Effect.EXECUTE),
        (True, True, Effect.READ),
        (True, False, Effect.EXECUTE),
        (True, None, Effect.EXECUTE),
    ],
)
def test_risky_unless_a_trusted_server_says_read_only(trust: bool, hint: bool | None, effect: Effect) -> None:
    tool, _ = make_tool("s", "mcp__s__look", remote(hint), never, trust_annotations=trust)
    assert tool.effect is effect and tool.read_only is (effect is Effect.READ)
    assert tool.untrusted_output and tool.path_argument is None and tool.command_argument is None


def test_spec_and_facts() -> None:
    tool, dropped = make_tool("s", "mcp__s__look", remote(), never, trust_annotations=False)
    assert dropped == []
    assert tool.spec() == {
        "type": "function",
        "function": {
            "name": "mcp__s__look",
            "description": "Look things up. Slowly.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    assert tool.brief == "Look things up." and tool.remote_name == "look" and tool.summary({"q": "cats"}) == "cats"


def test_arguments_checked_for_required_and_unknown_names_when_closed() -> None:
    closed = {"type": "object", "properties": {"q": {}, "n": {}}, "required": ["q"], "additionalProperties": False}
    tool, _ = make_tool("s", "mcp__s__look", remote(schema=closed), never, trust_annotations=False)
    assert tool.Args.model_validate({"q": "x", "n": 1}).model_dump() == {"q": "x", "n": 1}
    with pytest.raises(ValueError, match="'q' is required"):
        tool.Args.model_validate({"n": 1})
    with pytest.raises(ValueError, match=r"unexpected argument 'z' \(allowed: q, n\)"):
        tool.Args.model_validate({"q": "x", "z": 1})
    open_tool, _ = make_tool("s", "mcp__s__look", remote(), never, trust_annotations=False)
    assert open_tool.Args.model_validate({"anything": [1]}).model_dump() == {"anything": [1]}


def test_results_text_images_and_resources() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="A" * 400, mime_type="image/png"),
            types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt", mime_type="text/plain"),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(uri="mem://n", text="inline")),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="mem://b", blob="QUJD", mime_type="application/zip"),
            ),
        ]
    )
    assert render_result(result).splitlines() == [
        "hello",
        "[image: image/png, about 300 bytes]",
        "[resource link: file:///a.txt (name a.txt, type text/plain)]",
        "[resource: mem://n, 6 characters]",
        "inline",
        "[resource: mem://b (type application/zip), about 3 bytes]",
    ]


def test_structured_content_when_there_is_no_text_and_errors() -> None:
    assert render_result(types.CallToolResult(content=[], structured_content={"n": 1})) == '{"n": 1}'
    with pytest.raises(ToolFailure, match="no such issue"):
        text = types.TextContent(type="text", text="no such issue")
        render_result(types.CallToolResult(content=[text], is_error=True))
    with pytest.raises(ToolFailure, match="without a message"):
        render_result(types.CallToolResult(content=[], is_error=True))
