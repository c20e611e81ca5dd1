"""Rules that name tools rather than commands: a rule word starting with `mcp__` is a glob on tool names
(`*`, `?`, `[...]`), where any other bare word means a command prefix.

    allow = ["mcp__git__*"]             every tool of the MCP server git
    deny  = ["mcp__git__git_commit"]    that one tool (deny wins, in every mode)

A pattern is one word of the characters tool names use plus the glob characters; it takes no
`(PATTERN)` (MCP tools have no path or command argument for one to look at). Because server names
cannot contain `__`, `mcp__git__*` never reaches the tools of another server.
"""

from __future__ import annotations

import fnmatch
import re

PREFIX = "mcp__"
_PATTERN = re.compile(r"mcp__[A-Za-z0-9_*?\[\]!-]*")


def is_tool_pattern(text: str) -> bool:
    """Whether a rule (stripped) names tools: it starts with `mcp__`."""
    return text.startswith(PREFIX)


def check_tool_pattern(rule: str) -> str:
    """The pattern of a tool-name rule, or ValueError saying what is wrong with it."""
    if "(" in rule:
        raise ValueError(f"the rule {rule!r}: an MCP tool rule is the tool name or a pattern, without (...)")
    if not _PATTERN.fullmatch(rule):
        raise ValueError(f"the rule {rule!r}: an MCP tool pattern is one word of A-Z, a-z, 0-9, _, - and * ? [ ]")
    return rule


def names_tool(pattern: str, tool: str) -> bool:
    return fnmatch.fnmatchcase(tool, pattern)
