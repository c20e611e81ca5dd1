"""One MCP server tool as a paicli Tool, with the same facts every tool states (paicli/tools/base.py).

Risky by default: `effect` is EXECUTE (it acts outside paicli's view), unless its server is configured
with `trust_annotations = true` and the tool says `readOnlyHint: true`; then it is READ and runs like
read_file (no approval, parallel with other reads, allowed in FILE_READ and ANALYSIS tasks). Its
output is untrusted data (marked so for the model), capped and masked by the tool box like any tool's.

What a call returns, for the model: text content as it is; images, audio and resource links as a short
description; an embedded resource as a description followed by its text (a blob is described only);
structured content as JSON when there is nothing else. A result marked `isError` is a failed call.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, model_validator

from paicli.common.sanitize import well_formed
from paicli.mcp.schema import MAX_DESCRIPTION, function_schema, one_line
from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure

MAX_RESULT_CHARS = 1_000_000  # what is kept of a result before the tool box masks and caps it
# Calls a server's tool by its own name with the arguments; returns the result (raises ToolFailure).
Caller = Callable[[str, dict[str, Any]], Awaitable[Any]]


class RemoteTool(Protocol):
    """What paicli reads of an MCP `Tool` (mcp.types.Tool)."""

    name: str
    description: str | None
    input_schema: dict[str, Any]
    annotations: Any


class McpArgs(BaseModel):
    """Any JSON object; a subclass per tool checks the required names and, for a closed schema, unknown
    ones (the server checks everything else)."""

    model_config = ConfigDict(extra="allow")
    required_names: ClassVar[tuple[str, ...]] = ()
    known_names: ClassVar[tuple[str, ...] | None] = None  # None: other names are allowed

    @model_validator(mode="before")
    @classmethod
    def _check_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        missing = [name for name in cls.required_names if name not in data]
        if missing:
            raise ValueError(", ".join(f"'{name}' is required" for name in missing))
        if cls.known_names is not None and (unknown := [name for name in data if name not in cls.known_names]):
            allowed = ", ".join(cls.known_names) or "none"
            raise ValueError(", ".join(f"unexpected argument '{name}'" for name in unknown) + f" (allowed: {allowed})")
        return data


class McpTool(Tool):
    """Base of the classes `make_tool` builds, one per tool of a server."""

    untrusted_output = True
    data_source = "an MCP server"
    external = True
    server: ClassVar[str]
    remote_name: ClassVar[str]  # the tool's own name on its server
    parameters: ClassVar[dict[str, Any]]  # the schema the model sees
    brief: ClassVar[str]  # one line, for the planner's list

    def __init__(self, call: Caller) -> None:
        self._call = call

    async def run(self, args: Any, ctx: ToolContext) -> str:
        arguments = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        result = await self._call(self.remote_name, arguments)
        return render_result(result)

    @classmethod
    def spec(cls) -> dict[str, Any]:
        parameters = json.loads(json.dumps(cls.parameters))  # a copy: the box keeps its own bytes
        return {
            "type": "function",
            "function": {"name": cls.name, "description": cls.description, "parameters": parameters},
        }


def make_tool(
    server: str, name: str, remote: RemoteTool, call: Caller, *, trust_annotations: bool
) -> tuple[McpTool, list[str]]:
    """The tool named `name` (see schema.tool_names) for `remote`, and the schema keywords it dropped."""
    parameters, dropped = function_schema(remote.input_schema)
    properties = parameters.get("properties", {})
    closed = parameters.get("additionalProperties") is False
    description = (remote.description or "").strip() or f"{remote.name} (a tool of the MCP server {server})"
    read_only = trust_annotations and getattr(remote.annotations, "read_only_hint", None) is True
    args = type(
        f"McpArgs_{name}",
        (McpArgs,),
        {
            "required_names": tuple(n for n in parameters.get("required", []) if isinstance(n, str)),
            "known_names": tuple(properties) if closed else None,
        },
    )
    cls = type(
        f"McpTool_{name}",
        (McpTool,),
        {
            "name": name,
            "description": description[:MAX_DESCRIPTION],
            "Args": args,
            "effect": Effect.READ if read_only else Effect.EXECUTE,
            "server": server,
            "remote_name": remote.name,
            "parameters": parameters,
            "brief": one_line(description),
        },
    )
    return cls(call), dropped


def render_result(result: Any) -> str:
    """The text of a CallToolResult for the model; ToolFailure with that text when it is an error."""
    parts = [_content(item) for item in getattr(result, "content", None) or []]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    # the stdio transport has made its message well formed; other transports' readers may not have
    text = well_formed("\n".join(part for part in parts if part)[:MAX_RESULT_CHARS])
    if getattr(result, "is_error", False):
        raise ToolFailure(text or "the tool reported an error without a message")
    return text


def _content(item: Any) -> str:
    kind = getattr(item, "type", "")
    if kind == "text":
        return str(getattr(item, "text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {getattr(item, 'mime_type', '?')}, about {_decoded_size(getattr(item, 'data', ''))} bytes]"
    if kind == "resource_link":
        return f"[resource link: {getattr(item, 'uri', '?')}{_described(item)}]"
    if kind == "resource":
        resource = getattr(item, "resource", None)
        text = getattr(resource, "text", None)
        head = f"[resource: {getattr(resource, 'uri', '?')}{_described(resource)}"
        if isinstance(text, str):
            return f"{head}, {len(text):,} characters]\n{text}"
        return f"{head}, about {_decoded_size(getattr(resource, 'blob', ''))} bytes]"
    return f"[{str(kind)[:40] or 'unknown'} content]"


def _described(item: Any) -> str:
    facts: Mapping[str, Any] = {"name": getattr(item, "name", None), "type": getattr(item, "mime_type", None)}
    shown = [f"{key} {value}" for key, value in facts.items() if value]
    return f" ({', '.join(shown)})" if shown else ""


def _decoded_size(data: Any) -> str:
    return f"{len(data) * 3 // 4:,}" if isinstance(data, str) else "?"
