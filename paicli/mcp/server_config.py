"""How an MCP server is configured: `[mcp_servers.NAME]` tables in the config files and a workspace's
`.mcp.json` (the `mcpServers` format Claude Code uses). Pure: nothing here imports the MCP SDK.

    [mcp_servers.git]
    command = "mcp-server-git"          # a stdio server: a program paicli starts
    args = ["--repository", "."]
    env = { GIT_PAGER = "cat" }
    [mcp_servers.tracker]
    url = "http://127.0.0.1:9000/mcp"   # a streamable HTTP server (type = "sse" for the older SSE one)
    headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }

`${VAR}` (and `${VAR:-default}`) in `args`, `env`, `url` and `headers` is replaced from paicli's
environment when the server starts (`expanded`); a variable that is unset and has no default fails
that server, naming the variable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
Transport = Literal["stdio", "http", "sse"]
JSON_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpServerConfig(BaseModel):
    """One MCP server. Exactly one of `command` (stdio) and `url` (HTTP) unless `enabled = false`."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, min_length=1, description="program of a stdio server")
    args: list[str] = Field(default_factory=list, description="its arguments")
    env: dict[str, str] = Field(default_factory=dict, description="variables added to its small environment")
    url: str | None = Field(None, description="endpoint of an HTTP server")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers sent with every request")
    type: Transport | None = Field(None, description="stdio, http (streamable HTTP) or sse; from command/url if unset")
    enabled: bool = Field(True, description="false: configured but not started")
    startup_timeout: float = Field(30.0, gt=0, le=600, description="seconds to start, initialize and list tools")
    tool_timeout: float = Field(60.0, gt=0, le=86_400, description="seconds one tool call may take")
    trust_annotations: bool = Field(False, description="believe its readOnlyHint: such tools run like read_file")
    sandbox: bool = Field(False, description="run a stdio server inside the command sandbox")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if self.command is not None and self.url is not None:
            raise ValueError("give either command (a stdio server) or url (an HTTP server), not both")
        if self.command is None and self.url is None and self.enabled:
            raise ValueError("needs command (a stdio server) or url (an HTTP server)")
        if self.command is not None and self.type not in (None, "stdio"):
            raise ValueError(f"type {self.type} needs a url, not a command")
        if self.url is not None:
            if self.type == "stdio":
                raise ValueError("type stdio needs a command, not a url")
            if not re.match(r"https?://", self.url.strip(), re.IGNORECASE):
                raise ValueError(f"url must start with http:// or https:// (got {self.url[:60]!r})")
        return self

    @property
    def transport(self) -> Transport:
        if self.type is not None:
            return self.type
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """`mcp-server-git --repository .` or `http://127.0.0.1:9000/mcp` (unexpanded, for people)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return f"{self.url} ({self.transport})" if self.transport == "sse" else str(self.url)


def check_server_name(name: str) -> str:
    """The name, or ValueError: letters, digits, `_` and `-`, at most 40, no `__`, not ending with `_`
    (tool names are `mcp__SERVER__TOOL`: the server must be readable back from a tool's name)."""
    if not SERVER_NAME.fullmatch(name) or "__" in name or name.endswith("_"):
        raise ValueError(
            f"MCP server name {name[:60]!r}: use letters, digits, _ and - (at most 40; no __; "
            "starting with a letter or digit, not ending with _)"
        )
    return name


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` replaced from `env`; ValueError naming an unset variable."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if env.get(name):
            return env[name]
        if default is not None:
            return default
        raise ValueError(f"${{{name}}} is not set in the environment")

    return _VARIABLE.sub(value, text)


def expanded(config: McpServerConfig, env: Mapping[str, str]) -> McpServerConfig:
    """The config with `${VAR}` replaced in args, env, url and headers (ValueError: a variable is unset)."""
    return config.model_copy(
        update={
            "args": [expand(arg, env) for arg in config.args],
            "env": {key: expand(value, env) for key, value in config.env.items()},
            "url": expand(config.url, env) if config.url is not None else None,
            "headers": {key: expand(value, env) for key, value in config.headers.items()},
        }
    )


def servers_from_mcp_json(raw: bytes) -> tuple[dict[str, McpServerConfig], list[str]]:
    """The servers of a `.mcp.json` and what was wrong with the rest (one line each; those are skipped).
    ValueError when the file is not a JSON object at all."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else error
        raise ValueError(f"not valid JSON ({reason})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    table = data.get("mcpServers", {})
    if not isinstance(table, dict):
        raise ValueError('"mcpServers" is not an object')
    servers: dict[str, McpServerConfig] = {}
    problems: list[str] = []
    for name, entry in table.items():
        try:
            servers[check_server_name(str(name))] = _json_server(entry)
        except (ValueError, ValidationError) as error:
            problems.append(f"server {str(name)[:40]!r}: {_first_error(error)}")
        if isinstance(entry, dict) and (unknown := sorted(set(map(str, entry)) - _JSON_KEYS)):
            problems.append(f"server {str(name)[:40]!r}: ignored {', '.join(k[:30] for k in unknown[:5])}")
    return servers, problems


_JSON_KEYS = set(McpServerConfig.model_fields)


def _json_server(entry: Any) -> McpServerConfig:
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    values = {key: value for key, value in entry.items() if key in _JSON_KEYS}
    kind = values.pop("type", None)
    if kind is not None:
        if not isinstance(kind, str) or kind.strip().lower() not in JSON_TYPES:
            raise ValueError(f"type {str(kind)[:30]!r} is not supported (stdio, http or sse)")
        values["type"] = JSON_TYPES[kind.strip().lower()]
    return McpServerConfig.model_validate(values)


def _first_error(error: ValueError | ValidationError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"]).removeprefix("Value error, ")
    return str(error)


def describe_servers(servers: Mapping[str, McpServerConfig]) -> str:
    """`git: mcp-server-git --repository ., tracker: http://…` (for a one-line listing)."""
    return ", ".join(f"{name}: {server.describe()}" for name, server in servers.items())


# ---- what the trust question shows of a server: every field that changes what runs -------------------

SHOWN_FIELDS = ("command", "args", "env", "url", "headers", "type", "enabled", "sandbox", "trust_annotations")
LOADER_VARIABLES = re.compile(  # variables that make a program load or run other code
    r"LD_\w+|DYLD_\w+|PYTHON\w*|NODE_\w+|PERL\w*|RUBY\w*|BASH_ENV|ENV|PATH|GIT_\w+|JAVA_TOOL_OPTIONS|_JAVA_\w+|"
    r"CLASSPATH|GEM_\w+|BUNDLE_\w+|NPM_CONFIG_\w+|LUA_\w+|PS4|SHELLOPTS|PROMPT_COMMAND|\w*PRELOAD\w*",
    re.IGNORECASE,
)
TrustField = tuple[str, str]  # (what, its value as written): shown whole, made visible, by the trust question


def server_fields(name: str, entry: Any, env: Mapping[str, str]) -> list[TrustField]:
    """Every field of one server entry as written (a `.mcp.json` object or a `[mcp_servers.NAME]` table,
    valid or not): how it runs, then each of command, args, env, url, headers, type, enabled, sandbox and
    trust_annotations, and any other key. A `${VAR}` is followed by what it is filled with, its value
    masked: a URL or header that sends the user's token somewhere says so."""
    label = f"server {name}"
    if not isinstance(entry, Mapping):
        return [(label, repr(entry))]
    fields: list[TrustField] = [(label, _how_it_runs(entry))]
    keys = [key for key in SHOWN_FIELDS if key in entry]
    keys += [key for key in entry if key not in SHOWN_FIELDS]
    if "sandbox" not in entry and entry.get("command") is not None:
        fields.append((f"{label} sandbox", "false (not set)"))
    for key in keys:
        value = entry[key]
        if isinstance(value, list):
            for index, item in enumerate(value):
                _add(fields, f"{label} {key}[{index}]", str(item), env)
        elif isinstance(value, Mapping):
            for inner, item in value.items():
                loads = key == "env" and LOADER_VARIABLES.fullmatch(str(inner))
                _add(
                    fields,
                    f"{label} {key} {inner}{' (makes the program load other code)' if loads else ''}",
                    str(item),
                    env,
                )
        else:
            _add(fields, f"{label} {key}", json.dumps(value) if isinstance(value, bool) else str(value), env)
    return fields


def _add(fields: list[TrustField], label: str, text: str, env: Mapping[str, str]) -> None:
    """The field, then for each `${VAR}` in it what paicli fills in, its value masked."""
    fields.append((label, text))
    notes: list[str] = []
    for match in _VARIABLE.finditer(text):
        variable, default = match.group(1), match.group(2)
        if env.get(variable):
            notes.append(f"${{{variable}}} is filled in with your {variable} ({len(env[variable])} characters, hidden)")
        elif default is not None:
            notes.append(f"${{{variable}}} is unset: {default!r} instead")
        else:
            notes.append(f"${{{variable}}} is unset: the server would fail")
    fields += [(f"{label} ↳", note) for note in dict.fromkeys(notes)]


def _how_it_runs(entry: Mapping[str, Any]) -> str:
    if entry.get("enabled") is False:
        return "configured but not started (enabled = false)"
    if entry.get("command") is not None:
        if entry.get("sandbox") is True:
            return "a program paicli starts, inside the command sandbox"
        return "a program paicli starts on your machine, with your rights (not sandboxed)"
    return "an HTTP server paicli connects to"
