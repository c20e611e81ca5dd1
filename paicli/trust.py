"""Trust in what a repository ships in its own `.paicli/`: its config.toml (and a `.mcp.json`), and the
store of what the user trusted, which its folders of prompt overrides and commands use too
(paicli/trusted_folders.py).

A repository is someone else's text. Its config may choose timeouts, deny rules, ... but some settings
apply only once the user has confirmed that file for that repository, some only downwards and some only
upwards:

Trust-only (`requires_trust`): ignored with a warning until trusted.
- where the key goes and what runs unasked: `base_url`, `api_key`, `provider`, `approval`, `allow`,
  `mcp_servers` (programs paicli starts) and `hooks` (commands it runs); a workspace's `.mcp.json` as a
  whole (`screen_repo_file`);
- how commands are contained: `sandbox`, `sandbox_network`, `sandbox_writable`, `sandbox_hide`,
  `unsandboxed` (even `sandbox_hide`, which only narrows: one rule for the whole family);
- model names (`model`, `reviewer_model`, any other `*_model`, the `[models]` table) and prices (any key
  with "price" in its name, `[prices]` included): a repository must not pick what the user pays per token.

Downwards only (`SPENDING_LIMITS`): a repository may lower them (a smaller budget, fewer rounds, less
parallelism, the reviewer off) without being trusted, never raise them above the user's own value (their
~/.paicli/config.toml) or paicli's default; a raise needs trust like the keys above.
- `max_rounds`, `max_replans`, `max_steps`, `max_attempts`, `max_parallel`, `context_tokens`,
  `review_threshold` (a higher bar means more paid review rounds), `review` (on is "higher" than off);
- `max_budget_tokens`: unset means unlimited, so any budget a repository sets is a lowering;
- `max_tokens`: unset means the server's default, which paicli cannot compare with, so a repository's
  value needs trust unless the user set one it stays under;
- `sessions_keep` (fewer saved conversations).

Upwards only (`PROTECTIONS`, the other direction): what lets the user undo a turn or a plan. A repository
may raise them (`checkpoints = true`, more kept, larger limits) without being trusted, never turn
`checkpoints` off nor lower `checkpoints_keep`, `checkpoint_max_files`, `checkpoint_max_new_mb` or
`checkpoint_max_file_mb` below the user's own value or paicli's default: such a value needs trust. A value
that is not a number or a boolean (`"false"`, a table) cannot be compared, so it needs trust too; what is
ignored is never validated, so `checkpoints_keep = 0` untrusted is a warning, trusted a configuration
error. The user's own ~/.paicli/config.toml may set them to anything valid.

Flags and the environment still win over any file, trusted or not.

What is trusted is keyed on the repository AND the file: ~/.paicli/trusted.json holds, per workspace
real path, the path of the file below it and the SHA-256 of the bytes confirmed. A changed file (a `git
pull`) is asked about again, and so is the same file under another repository (a config symlinked from a
trusted repository counts for nothing). A symlinked `.paicli`, `config.toml`, `prompts` folder or prompt
file is refused outright, with a warning, never followed: its settings are ignored. Trust recorded by
paicli before this scheme (version 1, keyed by the config's resolved path alone) is not read: those
files are simply asked about again.

The seams: `load_settings(..., confirm_trust=..., warn=...)` takes a callable that is asked (the REPL
shows a prompt at start-up, see paicli.ui.prompt.approval_prompt.confirm_trust); without one (headless)
nothing blocks and the settings that need trust are ignored with a warning, the others apply. Warnings go
to the caller's `warn` (the command line prints them on stderr): this module never prints.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.mcp.server_config import TrustField, server_fields
from paicli.tools.atomic import atomic_write
from paicli.tools.confined import UnsafeFile, read_below, read_path

SENSITIVE_KEYS = ("base_url", "api_key", "provider", "approval", "allow", "mcp_servers", "hooks")
SPENDING_LIMITS = frozenset(
    {
        "max_rounds",
        "max_replans",
        "max_steps",
        "max_attempts",
        "max_parallel",
        "context_tokens",
        "review_threshold",
        "review",
        "early_start",
        "max_budget_tokens",
        "max_tokens",
        "sessions_keep",
    }
)
PROTECTIONS = frozenset(
    {"checkpoints", "checkpoints_keep", "checkpoint_max_files", "checkpoint_max_new_mb", "checkpoint_max_file_mb"}
)
LIMITS = SPENDING_LIMITS | PROTECTIONS  # compared with the user's own value; shown with it
UNLIMITED_WHEN_UNSET = frozenset({"max_budget_tokens"})
CONFIG_FILE = ".paicli/config.toml"
MAX_REPO_FILE_BYTES = 1 << 20  # a config or a prompt override larger than this is refused unread
MAX_TRUST_FILE_BYTES = 8 << 20


def requires_trust(key: str) -> bool:
    """Keys a repository's config may set only once trusted, whatever their value."""
    return (
        key in SENSITIVE_KEYS
        or key in ("model", "models")
        or key.endswith("_model")
        or "price" in key
        or key.startswith("sandbox")
        or key == "unsandboxed"
    )


@dataclass(frozen=True)
class TrustRequest:
    """What the user is asked to confirm: the file and the values it sets that need trust (the key hidden),
    and for MCP servers every field of each (`server_fields`: command, args, env, url, headers with what
    their `${VAR}`s are filled with, masked, sandbox, trust_annotations). Shown whole, never cut."""

    path: Path
    values: dict[str, str]
    fields: tuple[TrustField, ...] = ()


ConfirmTrust = Callable[[TrustRequest], bool]
Warn = Callable[[str], None]


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class RepoFile:
    """A file of a repository's `.paicli/`, as read (no symlink followed, size capped)."""

    workspace: Path  # real path
    relative: str  # below the workspace, with "/"
    data: bytes

    @property
    def path(self) -> Path:
        return self.workspace / self.relative

    @property
    def digest(self) -> str:
        return fingerprint(self.data)


def read_repo_file(workspace: Path, relative: str) -> RepoFile | None:
    """The file, or None when it does not exist; UnsafeFile (a ConfigError) for a symlink anywhere from the
    workspace down, a special file, or more than `MAX_REPO_FILE_BYTES`."""
    root = Path(os.path.realpath(workspace))
    try:
        data = read_below(root, relative.split("/"), limit=MAX_REPO_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return RepoFile(root, relative, data)


class TrustStore:
    """~/.paicli/trusted.json: {"version": 2, "trusted": {"<workspace real path>": {"<file below it>":
    "<sha256>"}}}."""

    VERSION = 2

    def __init__(self, home: Path) -> None:
        self.path = home / ".paicli" / "trusted.json"

    def is_trusted(self, file: RepoFile) -> bool:
        return self._load().get(str(file.workspace), {}).get(file.relative) == file.digest

    def trust(self, file: RepoFile) -> None:
        trusted = self._load()
        trusted.setdefault(str(file.workspace), {})[file.relative] = file.digest
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps({"version": self.VERSION, "trusted": trusted}, indent=2) + "\n")

    def trust_current(self, workspace: Path, relative: str) -> bool:
        """Trusts the file as it is now (what answering yes records); False if it cannot be read."""
        try:
            file = read_repo_file(workspace, relative)
        except (UnsafeFile, OSError):
            return False
        if file is not None:
            self.trust(file)
        return file is not None

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(read_path(self.path, limit=MAX_TRUST_FILE_BYTES))
        except (OSError, ValueError, RecursionError):
            return {}  # missing or unreadable: nothing is trusted (fails closed)
        if not isinstance(data, dict) or data.get("version") != self.VERSION:
            return {}  # version 1 (keyed by the config's path alone) or unknown: asked again
        trusted = data.get("trusted")
        if not isinstance(trusted, dict):
            return {}
        return {
            str(workspace): {str(k): str(v) for k, v in files.items()}
            for workspace, files in trusted.items()
            if isinstance(files, dict)
        }


def screen_workspace_config(
    data: Mapping[str, Any],
    file: RepoFile,
    *,
    home: Path,
    baseline: Mapping[str, Any],
    confirm: ConfirmTrust | None = None,
    warn: Warn,
) -> dict[str, Any]:
    """The workspace config's values to apply: all of them when trusted (or confirmed now), else all but
    those that need trust, with a warning that names what was ignored. `baseline` is what applies without
    this file (the user's own config over paicli's defaults): the measure of raising a spending limit or
    lowering a protection. Protections lowered get a warning of their own, which says why."""
    values = dict(data)
    needing = needs_trust(values, baseline)
    if not needing:
        return values
    store = TrustStore(home)
    if store.is_trusted(file):
        return values
    fields = mcp_fields(values["mcp_servers"]) if "mcp_servers" in needing else ()
    if confirm is not None and confirm(TrustRequest(file.path, needing, fields)):
        store.trust(file)
        return values
    later = "this repository's config is not trusted yet (start paicli here interactively to review and trust it)"
    if others := [key for key in needing if key not in PROTECTIONS]:
        ignored = ", ".join(f"{key} = {needing[key]}" if key in LIMITS else key for key in others)
        warn(f"ignoring {ignored} from {file.path}: {later}")
    if protections := [key for key in needing if key in PROTECTIONS]:
        ignored = ", ".join(f"{key} = {needing[key]}" for key in protections)
        why = "turning checkpoints off or lowering their limits (what undo needs) takes your trust"
        if any(not isinstance(values[key], int | float) for key in protections):
            why += " (a value that is not a number or true/false counts as lowering)"
        warn(f"ignoring {ignored} from {file.path}: {why}, and {later}")
    return {key: value for key, value in values.items() if key not in needing}


def screen_repo_file(
    file: RepoFile,
    what: dict[str, str],
    *,
    home: Path,
    confirm: ConfirmTrust | None = None,
    warn: Warn,
    fields: tuple[TrustField, ...] = (),
) -> bool:
    """Whether a repository file that needs trust as a whole (a `.mcp.json`: it names programs to start)
    may be used: trusted before, or confirmed now (`what` and `fields` are shown); else False, with a warning."""
    store = TrustStore(home)
    if store.is_trusted(file):
        return True
    if confirm is not None and confirm(TrustRequest(file.path, what, fields)):
        store.trust(file)
        return True
    warn(
        f"ignoring {', '.join(what)} from {file.path}: this repository's file is not trusted yet "
        "(start paicli here interactively to review and trust it)"
    )
    return False


def needs_trust(values: Mapping[str, Any], baseline: Mapping[str, Any]) -> dict[str, str]:
    """key → how it is shown, for every value that needs trust: sensitive keys first, then in file order."""
    keys = [key for key in SENSITIVE_KEYS if key in values]
    keys += [key for key in values if key not in SENSITIVE_KEYS and requires_trust(key)]
    keys += [key for key in values if key in SPENDING_LIMITS and raises(key, values[key], baseline.get(key))]
    keys += [key for key in values if key in PROTECTIONS and lowers(values[key], baseline.get(key))]
    shown = {key: _shown(key, values[key]) for key in keys}
    for key in keys:
        if key in LIMITS:
            mine = "unset" if baseline.get(key) is None else _shown(key, baseline[key])
            shown[key] += f" (yours: {mine})"
    return shown


def raises(key: str, value: Any, current: Any) -> bool:
    """Whether a repository's `value` for the limit `key` goes above `current` (or cannot be compared)."""
    if current is None:
        return key not in UNLIMITED_WHEN_UNSET
    numbers = (int, float)  # bool is an int: review = true is above review = false
    if not isinstance(value, numbers) or not isinstance(current, numbers):
        return True
    return bool(value > current)


def lowers(value: Any, current: Any) -> bool:
    """Whether a repository's `value` for a protection goes below `current`, or cannot be compared with it
    (a string such as "false", a table, NaN): either way it needs trust."""
    numbers = (int, float)  # bool is an int: checkpoints = false (or 0) is below true
    if not isinstance(value, numbers) or not isinstance(current, numbers):
        return True
    return not value >= current


def mcp_fields(servers: Any, env: Mapping[str, str] | None = None) -> tuple[TrustField, ...]:
    """Every field of every server in a `mcp_servers` table or `.mcp.json` (see `server_fields`)."""
    if not isinstance(servers, Mapping):
        return (("mcp_servers", repr(servers)),)
    environment = os.environ if env is None else env
    return tuple(field for name, entry in servers.items() for field in server_fields(str(name), entry, environment))


def _shown(key: str, value: Any) -> str:
    if key == "api_key":
        return "(a key; its value is not shown)"
    if key == "mcp_servers" and isinstance(value, dict):  # each field follows (TrustRequest.fields)
        return f"{len(value)} server{'s' if len(value) != 1 else ''}: {', '.join(map(str, value))} (every field below)"
    if key == "hooks" and isinstance(value, dict):  # every command whole: they run at every tool call
        return "; ".join(f"{event}: {_hook(hook)}" for event, hooks in value.items() for hook in _listed(hooks))
    if key in LIMITS and isinstance(value, str):
        return json.dumps(value)  # "false", quoted: a string, not the boolean
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _hook(hook: Any) -> str:
    """A hook as the trust question shows it: its command, and that it runs uncontained."""
    if not isinstance(hook, dict):
        return repr(hook)
    return str(hook.get("command")) + (" (outside the sandbox)" if hook.get("sandbox") is False else "")
