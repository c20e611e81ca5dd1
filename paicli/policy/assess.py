"""What a tool call is before mode, rules and grants are looked at (`assess`): safe, or what it needs and
what an "always" answer would remember; and the facts about a tool the policy reads (a name is looked up
among the built-in tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paicli.policy.classify import Classification, Risk, classify_command
from paicli.policy.ruling import Assessment
from paicli.tools.base import Effect, Tool
from paicli.tools.builtin.fetch_url import url_host
from paicli.tools.toolbox import builtin_tool


def assess(tool: Tool | str, arguments: Mapping[str, Any], workspace: Path) -> Assessment:
    """What the call is, from the tool's own facts (a name is looked up among the built-in tools)."""
    name, facts = name_of(tool), facts_of(tool)
    if facts is not None and (facts.effect is Effect.READ or (facts.effect is Effect.WRITE and facts.confined)):
        # reads, and writes the workspace guard confines (.git and .paicli protected): nothing to ask
        return Assessment(Risk.SAFE, "", path_summary(facts, arguments))
    if facts is not None and facts.effect is Effect.NETWORK:  # judged by host: `fetch_url(docs.python.org)`
        host = url_host(arguments) or "?"
        return Assessment(
            Risk.ASK,
            f"{name} reads {host} from the network",
            f"{name} {arguments.get(facts.path_argument or 'url')}",
            grant_keys=(f"net:{name}:{host}",),
            always_label=f"every {name} call to {host}",
        )
    if facts is None or facts.command_argument is None:
        why = f"{name} is not a built-in tool" if facts is None else f"{name} can change things"
        return Assessment(
            Risk.ASK,
            why,
            f"{name} {dict(arguments)}",
            grant_keys=(f"tool:{name}",),
            always_label=f"every {name} call",
        )
    command = str(arguments.get(facts.command_argument, ""))
    found = classify_command(command, workspace)
    keys: list[str] = []
    if found.risk is Risk.ASK:
        for finding in found.asks:
            keys.append(f"cmd:{finding.prefix}" if finding.prefix else f"exact:{command}")
    elif found.risk is Risk.OPAQUE:
        keys.append(f"exact:{command}")
    keys = list(dict.fromkeys(keys))
    prefixes = [k.removeprefix("cmd:") for k in keys if k.startswith("cmd:")]
    label = "this exact command"
    if prefixes and len(prefixes) == len(keys):
        label = ", ".join(f"`{p} …`" for p in prefixes) + " commands"
    return Assessment(found.risk, found.reason, command, tuple(keys), label, found)


def contained(found: Classification | None) -> bool:
    """Whether the sandbox makes a command that asks harmless: it only writes or runs project code; it
    neither destroys work in the workspace nor reads outside it (what it reads reaches the model)."""
    return found is not None and not found.destructive and not found.reads_outside


def name_of(tool: Tool | str) -> str:
    return tool if isinstance(tool, str) else tool.name


def facts_of(tool: Tool | str) -> Tool | None:
    """The tool itself; for a name, the built-in tool of that name (None: not a built-in tool)."""
    return builtin_tool(tool) if isinstance(tool, str) else tool


def path_summary(tool: Tool, arguments: Mapping[str, Any]) -> str:
    path = arguments.get(tool.path_argument) if tool.path_argument else None
    return f"{tool.name} {path}" if isinstance(path, str) else tool.name
