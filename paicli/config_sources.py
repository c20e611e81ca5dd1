"""Where Settings (paicli/config.py) come from and how they merge: flags > environment > workspace
.paicli/config.toml > ~/.paicli/config.toml (`load_settings`).

Environment: PAICLI_API_KEY / PAICLI_BASE_URL / PAICLI_MODEL / PAICLI_PROVIDER, falling back to
OPENAI_API_KEY / OPENAI_BASE_URL (for the openai provider or none only); PAICLI_PLAN_MAX_REPLANS for the
replan limit. Config files use the field names of Settings (`model = "deepseek-chat"`, `max_parallel = 4`, ...),
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
from typing import Any

from pydantic import ValidationError

from paicli.common.errors import ConfigError
from paicli.config import Settings, task_models, user_home
from paicli.llm.providers import PROVIDERS, find_provider
from paicli.mcp.server_config import McpServerConfig, servers_from_mcp_json
from paicli.policy.hook_config import merged_hooks
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

MCP_JSON = ".mcp.json"  # a workspace's MCP servers in the format Claude Code uses
QUIET_FIELDS = {"startup_timeout", "tool_timeout"}  # of a server: not shown when asking to trust it
TABLES = ("models", "prices", "mcp_servers")  # merged entry by entry across the config files
# List settings that add up across the config files instead of replacing.
LISTS = ("allow", "deny", "sandbox_writable", "sandbox_hide", "unsandboxed")


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
