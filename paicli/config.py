"""Settings, resolved as: flags > environment > workspace .paicli/config.toml > ~/.paicli/config.toml.

Environment: PAICLI_API_KEY / PAICLI_BASE_URL / PAICLI_MODEL / PAICLI_PROVIDER, falling back to
OPENAI_API_KEY / OPENAI_BASE_URL (for the openai provider or none only); PAICLI_PLAN_MAX_REPLANS for the
replan limit. Config files use the field names below (`model = "deepseek-chat"`, `max_parallel = 4`, ...),
plus tables: `[models]` (task type → model, see paicli/plan/routing.py), `[prices."NAME"]`
(`input`, `output` per million tokens) and `[mcp_servers.NAME]` (paicli/mcp/server_config.py), which merge
entry by entry across the two files. A workspace's `.mcp.json` adds MCP servers too; a server of the same
name in a config file wins.

A provider preset (paicli/llm/providers.py) fills in `base_url` and `model` unless they are set at the
same level as `provider` or a higher one (levels: ~/.paicli < workspace config < environment < flags),
takes the key from the provider's own variable, and applies its quirks.

The workspace's own config is a repository's text: it is read without following a symlink (a symlinked
`.paicli` or `config.toml` is ignored with a warning), at most 1 MB, and what it may set untrusted is
decided in `paicli.trust` (some keys need trust, spending limits only go down, checkpoints only up).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, StringConstraints, ValidationError, field_validator

from paicli.common.errors import ConfigError
from paicli.llm.price import Price
from paicli.llm.providers import PROVIDERS, Provider, find_provider, on_loopback
from paicli.mcp.server_config import McpServerConfig, check_server_name, servers_from_mcp_json
from paicli.policy.hook_config import HooksConfig, merged_hooks
from paicli.tools.confined import UnsafeFile, read_path
from paicli.trust import (
    CONFIG_FILE,
    MAX_REPO_FILE_BYTES,
    ConfirmTrust,
    RepoFile,
    Warn,
    mcp_fields,
    read_repo_file,
    screen_repo_file,
    screen_workspace_config,
)
from paicli.trusted_folders import COMMANDS, screen_prompt_overrides, screen_repo_folder

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MCP_JSON = ".mcp.json"  # a workspace's MCP servers in the format Claude Code uses
QUIET_FIELDS = {"startup_timeout", "tool_timeout"}  # of a server: not shown when asking to trust it
TABLES = ("models", "prices", "mcp_servers")  # merged entry by entry across the config files
DEFAULT_MODEL = "gpt-4o-mini"
# The task types of a plan (paicli/plan/model.py TaskType, which sits above this layer; a test keeps the
# two lists equal), the keys of the [models] table.
TASK_TYPES = ("FILE_READ", "FILE_WRITE", "COMMAND", "ANALYSIS", "VERIFICATION")
# List settings that add up across the config files instead of replacing.
LISTS = ("allow", "deny", "sandbox_writable", "sandbox_hide", "unsandboxed")
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


ENV_FIELDS: dict[str, tuple[str, ...]] = {
    "api_key": ("PAICLI_API_KEY",),
    "base_url": ("PAICLI_BASE_URL",),
    "model": ("PAICLI_MODEL",),
    "provider": ("PAICLI_PROVIDER",),
    "max_replans": ("PAICLI_PLAN_MAX_REPLANS",),
    "max_parallel": ("PAICLI_MAX_PARALLEL",),
}
OPENAI_FALLBACKS = {"api_key": "OPENAI_API_KEY", "base_url": "OPENAI_BASE_URL"}  # openai provider or none only
HOME_LEVEL, WORKSPACE_LEVEL, ENV_LEVEL, FLAG_LEVEL = 1, 2, 3, 4


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


def read_config_file(path: Path) -> dict[str, Any]:
    """The user's own config file (symlinks followed: the user put it there); {} when there is none."""
    try:
        data = read_path(path, limit=MAX_REPO_FILE_BYTES)
    except FileNotFoundError:
        return {}
    except UnsafeFile:
        raise
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror or err}") from None
    return parse_config(data, path)


def parse_config(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as err:
        reason = "nested too deeply" if isinstance(err, RecursionError) else err
        raise ConfigError(f"cannot read {path}: {reason}") from None
    unknown = sorted(set(data) - set(Settings.model_fields) - {"workspace"})
    if unknown:
        raise ConfigError(f"{path}: unknown {'setting' if len(unknown) == 1 else 'settings'} {', '.join(unknown)}")
    data.pop("workspace", None)
    if isinstance(data.get("models"), dict):
        try:
            data["models"] = task_models(data["models"])
        except ValueError as err:
            raise ConfigError(f"{path}: [models]: {err}") from None
    return data


def env_values(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, names in ENV_FIELDS.items():
        for name in names:
            if env.get(name):
                values[field] = env[name]
                break
    return values


def user_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: $HOME when set and not empty (tests and sandboxes point it elsewhere),
    else the account's home. The one place paicli decides it."""
    value = (os.environ if env is None else env).get("HOME", "")
    return Path(value) if value else Path.home()


def load_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    workspace: Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    confirm_trust: ConfirmTrust | None = None,
    warn: Warn,
) -> Settings:
    """Merge every source; raises ConfigError with a one-line reason on a bad value.

    The workspace config's base_url, api_key, approval and allow rules, model names, raised spending
    limits and lowered checkpoint settings apply only when the user trusts that file (paicli.trust):
    `confirm_trust` is asked once per file version; without it they are ignored with a `warn`ing. Allow
    and deny rules add up across the files instead of replacing."""
    env = os.environ if env is None else env
    home = user_home(env) if home is None else home
    root = (workspace or Path.cwd()).resolve()
    if not root.is_dir():
        raise ConfigError(f"workspace {root} is not a folder")
    merged: dict[str, Any] = {}
    levels: dict[str, int] = {}  # where each value came from, for the provider preset
    home_config, workspace_config = home / ".paicli" / "config.toml", root / CONFIG_FILE
    _merge_config(merged, read_config_file(home_config), levels, HOME_LEVEL)
    own_folder = os.path.realpath(workspace_config) == os.path.realpath(home_config)  # the workspace is home
    if not own_folder and os.path.islink(root / ".paicli"):
        warn(
            f"{root / '.paicli'} is a symlink (to {os.readlink(root / '.paicli')!r}); paicli does not follow "
            "symlinks inside a repository's .paicli: its config and prompt overrides are ignored"
        )
    else:
        if not own_folder:
            repository = _repository_config(root, home, {**_defaults(), **merged}, confirm_trust, warn)
            _merge_config(merged, repository, levels, WORKSPACE_LEVEL)
        screen_prompt_overrides(root, home=home, confirm=confirm_trust, warn=warn)
        screen_repo_folder(root, COMMANDS, home=home, confirm=confirm_trust, warn=warn)  # custom slash commands
    if from_json := _workspace_mcp_servers(root, home, confirm_trust, warn):
        merged["mcp_servers"] = {**from_json, **merged.get("mcp_servers", {})}  # a config file's server wins
    _merge_config(merged, env_values(env), levels, ENV_LEVEL)
    _merge_config(merged, {k: v for k, v in (flags or {}).items() if v is not None}, levels, FLAG_LEVEL)
    apply_provider(merged, levels, env, warn)
    merged["workspace"] = root
    try:
        return Settings.model_validate(merged)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid setting {where}: {first['msg']}") from None


def _repository_config(
    root: Path, home: Path, baseline: Mapping[str, Any], confirm: ConfirmTrust | None, warn: Warn
) -> dict[str, Any]:
    """What the workspace's own config may set: read without following a symlink, then screened."""
    repo_file = _workspace_file(root, CONFIG_FILE, "its settings", warn)
    if repo_file is None:
        return {}
    values = parse_config(repo_file.data, repo_file.path)
    return screen_workspace_config(values, repo_file, home=home, baseline=baseline, confirm=confirm, warn=warn)


def _workspace_mcp_servers(
    root: Path, home: Path, confirm: ConfirmTrust | None, warn: Warn
) -> dict[str, McpServerConfig]:
    """The servers of the workspace's `.mcp.json`, once the user trusts that file (they run programs)."""
    file = _workspace_file(root, MCP_JSON, "its MCP servers", warn)
    if file is None:
        return {}
    try:
        servers, problems = servers_from_mcp_json(file.data)
    except ValueError as err:
        warn(f"{file.path}: {err}: its MCP servers are ignored")
        return {}
    for problem in problems:
        warn(f"{file.path}: {problem}")
    what = {"MCP servers (programs paicli starts)": ", ".join(servers) + " (every field below)"}
    shown = {name: server.model_dump(exclude_defaults=True, exclude=QUIET_FIELDS) for name, server in servers.items()}
    if servers and screen_repo_file(file, what, home=home, confirm=confirm, warn=warn, fields=mcp_fields(shown)):
        return servers
    return {}


def _workspace_file(root: Path, name: str, ignored: str, warn: Warn) -> RepoFile | None:
    """A file of the workspace, read without following a symlink; None when it is missing, unsafe or
    unreadable (the last two with a warning that `ignored` are ignored)."""
    try:
        return read_repo_file(root, name)
    except UnsafeFile as err:
        warn(f"{err}: {ignored} are ignored")
    except OSError as err:
        warn(f"cannot read {root / name}: {err.strerror or err}: {ignored} are ignored")
    return None


def _defaults() -> dict[str, Any]:
    return {name: field.default for name, field in Settings.model_fields.items() if field.default_factory is None}


def _merge_config(merged: dict[str, Any], values: Mapping[str, Any], levels: dict[str, int], level: int) -> None:
    """A later source's values over an earlier one's (each key's `level` noted, for the provider preset);
    rule and path lists add up, and the [models] and [prices] tables merge entry by entry."""
    for key, value in values.items():
        levels[key] = level
        if key in LISTS and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = [*merged[key], *value]
        elif key == "hooks":  # each point's hooks add up, the earlier file's first
            merged[key] = merged_hooks(merged.get(key), value)
        elif key in TABLES and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value


def apply_provider(merged: dict[str, Any], levels: dict[str, int], env: Mapping[str, str], warn: Warn) -> None:
    """The preset named by `provider` (if any) fills in what was not set at its level or above; the
    OPENAI_* variables count only for the openai provider or none, so that key never reaches another."""
    name = merged.get("provider")
    provider = find_provider(str(name)) if name else None
    if name and provider is None:
        raise ConfigError(f"unknown provider {name!r}: one of {', '.join(PROVIDERS)}")
    if provider is None or provider.name == "openai":
        for field, variable in OPENAI_FALLBACKS.items():
            if env.get(variable) and levels.get(field, 0) < ENV_LEVEL:
                merged[field], levels[field] = env[variable], ENV_LEVEL
    if provider is None:
        return
    merged["provider"] = provider.name
    if provider.key_variable and env.get(provider.key_variable) and levels.get("api_key", 0) < ENV_LEVEL:
        merged["api_key"] = env[provider.key_variable]
    if levels.get("base_url", 0) < levels["provider"]:
        merged["base_url"] = provider.base_url
    if levels.get("model", 0) < levels["provider"]:
        if provider.model is None:
            raise ConfigError(
                f"the {provider.name} preset needs a model name: --model NAME (the name the server serves; "
                f"GET {merged['base_url']}/models lists them)"
            )
        merged["model"] = provider.model
    if provider.max_tokens and merged.get("max_tokens") is None:
        merged["max_tokens"] = provider.max_tokens
    temperature, highest = merged.get("temperature"), provider.max_temperature
    if highest is not None and isinstance(temperature, int | float) and temperature > highest:
        warn(f"{provider.name} accepts a temperature of at most {highest:g}; using that")
        merged["temperature"] = highest
