"""Settings: everything configurable, one pydantic model whose fields (and their descriptions) are what
the config files, the environment and the flags may set (docs/configuration.md is generated from it).
Where the values come from and how they merge, flags > environment > workspace .paicli/config.toml >
~/.paicli/config.toml: paicli/config_sources.py (`load_settings`).

The `[models]` table maps task types to models (`task_models`); `user_home` is the one place paicli
decides the user's home folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, StringConstraints, field_validator

from paicli.common.errors import ConfigError
from paicli.llm.price import Price
from paicli.llm.providers import Provider, find_provider, on_loopback
from paicli.mcp.server_config import McpServerConfig, check_server_name
from paicli.policy.hook_config import HooksConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
# The task types of a plan (paicli/plan/model.py TaskType, which sits above this layer; a test keeps the
# two lists equal), the keys of the [models] table.
TASK_TYPES = ("FILE_READ", "FILE_WRITE", "COMMAND", "ANALYSIS", "VERIFICATION")
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^\S+$")]


class Settings(BaseModel):
    """Everything configurable. The API key is a SecretStr so it never shows in reprs or dumps."""

    workspace: Path = Field(default_factory=Path.cwd, description="folder the tools may touch")
    provider: str | None = Field(None, description="a preset: base URL, default model, key variable, quirks")
    api_key: SecretStr | None = Field(None, description="bearer token for the model server")
    base_url: str = Field(DEFAULT_BASE_URL, description="API root; requests go to {base_url}/chat/completions")
    model: str = Field(DEFAULT_MODEL, description="model name sent with every request")
    temperature: float | None = Field(None, ge=0, le=2, description="sampling temperature; unset: the server's default")
    max_tokens: int | None = Field(None, gt=0, description="completion token cap per request; unset: server's")
    connect_timeout: float = Field(10.0, gt=0, description="seconds to open a connection")
    read_timeout: float = Field(120.0, gt=0, description="seconds of silence before a stream counts as hung")
    max_attempts: int = Field(3, ge=1, le=10, description="attempts per model request, retries included")
    retry_backoff: float = Field(1.0, ge=0, description="first retry delay in seconds; doubles per attempt")
    rate_limit_wait: float = Field(
        120.0, ge=0, description="seconds one model request may spend rate limited (429/503) before it fails"
    )
    command_timeout: float = Field(60.0, gt=0, description="default timeout of execute_command")
    max_steps: int = Field(30, ge=1, description="model requests one ReAct loop may make")
    max_parallel: int = Field(4, ge=1, description="tasks of a plan running at once")
    max_replans: int = Field(2, ge=0, description="replans after failures before a plan is FAILED")
    schedule: Literal["eager", "batch"] = Field("eager", description="eager dispatch or PaiCLI's batches")
    review: bool = Field(True, description="score a finished plan and loop while under the threshold")
    early_start: bool = Field(
        False,
        description="a plan approved unasked (--yes) starts its read-only tasks while the planner still writes it",
    )
    review_threshold: float = Field(8.0, ge=0, le=10, description="review score that counts as done")
    max_rounds: int = Field(3, ge=1, description="plan → execute → review rounds at most")
    reviewer_model: str | None = Field(None, description="model for the reviewer; unset: `model`")
    planner_model: ModelName | None = Field(None, description="model for planning and replanning; unset: `model`")
    executor_model: ModelName | None = Field(None, description="model for plan tasks (after [models]); unset: `model`")
    summarizer_model: ModelName | None = Field(None, description="model for a plan's final answer; unset: `model`")
    models: dict[str, ModelName] = Field(
        default_factory=dict, description="[models] task type → model for its tasks; beats executor_model"
    )
    prices: dict[ModelName, Price] = Field(
        default_factory=dict, description='[prices."NAME"] input, output: per million tokens'
    )
    approval: Literal["ask", "auto", "yolo"] | None = Field(None, description="unset: ask in the REPL, auto headless")
    context_tokens: int = Field(64_000, gt=1000, description="context budget before compression")
    map_tokens: int = Field(
        3_000,
        ge=0,
        le=64_000,
        description="tokens of the repository map in the planner's request (files ranked for the goal); 0: none",
    )
    max_budget_tokens: int | None = Field(None, gt=0, description="hard token budget of a plan; unset: none")
    notify: bool = Field(True, description="REPL: bell + OSC 9 when a plan waits for review or finishes")
    notify_after: float = Field(10.0, ge=0, description="seconds a plan must have run before it notifies")
    allow: list[str] = Field(default_factory=list, description="rules for calls that run unasked (policy/rules.py)")
    deny: list[str] = Field(default_factory=list, description="rules for calls refused in every mode; deny wins")
    sandbox: Literal["auto", "bwrap", "off"] = Field(
        "auto", description="contain commands with bubblewrap: when it works (auto), always (bwrap), never (off)"
    )
    sandbox_network: bool = Field(False, description="commands in the sandbox reach the network")
    sandbox_writable: list[str] = Field(
        default_factory=list, description="more folders sandboxed commands may write (absolute or ~/...)"
    )
    sandbox_hide: list[str] = Field(
        default_factory=list, description="more files and folders sandboxed commands may not see (absolute or ~/...)"
    )
    unsandboxed: list[str] = Field(
        default_factory=list, description='command prefixes that always run outside the sandbox ("git push")'
    )
    checkpoints: bool = Field(True, description="checkpoint every turn and plan task so /undo can take it back")
    checkpoints_keep: int = Field(50, ge=1, description="turns and plans whose checkpoints are kept per workspace")
    sessions_keep: int = Field(100, ge=1, description="saved conversations kept per workspace (-c, /resume)")
    checkpoint_max_file_mb: float = Field(5.0, gt=0, description="files bigger than this are left out of checkpoints")
    checkpoint_max_files: int = Field(
        50_000, ge=1, description="a checkpoint that would store more new files than this turns checkpoints off"
    )
    checkpoint_max_new_mb: float = Field(
        1_000.0, gt=0, description="a checkpoint that would store more new megabytes than this turns checkpoints off"
    )
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=dict, description="[mcp_servers.NAME] MCP servers whose tools the model gets (paicli/mcp/)"
    )
    hooks: HooksConfig = Field(
        default_factory=HooksConfig,
        description="[[hooks.EVENT]] commands run around tool calls, at a turn's or plan's end, at a plan's approval",
    )

    @field_validator("models", mode="before")
    @classmethod
    def _known_task_types(cls, value: Any) -> Any:
        return task_models(value) if isinstance(value, dict) else value

    @field_validator("mcp_servers")
    @classmethod
    def _server_names(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in servers:
            check_server_name(name)
        return servers

    @field_validator("allow", "deny")
    @classmethod
    def _valid_rules(cls, rules: list[str]) -> list[str]:
        from paicli.policy.rules import check_rules  # the command classifier: loaded only when rules are set

        return check_rules(rules)

    @field_validator("unsandboxed")
    @classmethod
    def _valid_prefixes(cls, prefixes: list[str]) -> list[str]:
        from paicli.policy.rules import parse_command_prefixes

        parse_command_prefixes(prefixes)
        return prefixes

    @field_validator("sandbox_writable", "sandbox_hide")
    @classmethod
    def _sandbox_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not (path.startswith("/") or path == "~" or path.startswith("~/")) or "\x00" in path:
                raise ValueError(f"{path[:80]!r} is not an absolute path or one starting with ~/")
            if os.path.normpath(path) in ("/", "~"):
                raise ValueError(f"{path!r} is the whole filesystem or home folder; name a folder below it")
        return paths

    @property
    def preset(self) -> Provider | None:
        return find_provider(self.provider) if self.provider else None

    def needs_key(self) -> bool:
        """A remote endpoint needs a key; a local preset or any base URL on the loopback does not."""
        preset = self.preset
        return not ((preset is not None and preset.local) or on_loopback(self.base_url))

    def require_key(self) -> str:
        """The key ("" for an endpoint that needs none); ConfigError naming the variables when missing."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        if not self.needs_key():
            return ""
        preset = self.preset
        variable = preset.key_variable if preset is not None else "OPENAI_API_KEY"
        where = f" for {preset.name}" if preset is not None else ""
        raise ConfigError(f"no API key{where}: set PAICLI_API_KEY (or {variable}), or api_key in ~/.paicli/config.toml")


def task_models(table: Mapping[str, Any]) -> dict[str, Any]:
    """The [models] table keyed by task type names (`analysis`, `file-read` → `ANALYSIS`, `FILE_READ`);
    ValueError for a name that is no task type, or a type named twice."""
    models: dict[str, Any] = {}
    for name, model in table.items():
        key = str(name).strip().upper().replace("-", "_").replace(" ", "_")
        if key not in TASK_TYPES:
            raise ValueError(f"unknown task type {str(name)[:40]!r} (the types are {', '.join(TASK_TYPES)})")
        if key in models:
            raise ValueError(f"{key} is set twice")
        models[key] = model
    return models


def user_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: $HOME when set and not empty (tests and sandboxes point it elsewhere),
    else the account's home. The one place paicli decides it."""
    value = (os.environ if env is None else env).get("HOME", "")
    return Path(value) if value else Path.home()
