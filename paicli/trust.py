"""Trust in a repository's own `.paicli/config.toml`.

A repository is someone else's text. Its config may choose the model, timeouts, deny rules, ... but the
settings that decide where the API key is sent and what runs unasked (SENSITIVE_KEYS) are applied only
once the user has confirmed them for that repository. The confirmation is remembered in
~/.paicli/trusted.json, keyed by the config file's resolved path, with a hash of its content: a
changed file (a `git pull`) must be confirmed again.

The seam: `load_settings(..., confirm_trust=...)` takes a callable that is asked (the REPL shows a
prompt at start-up, see paicli.ui.approval.confirm_trust); without one (headless) nothing blocks and the
sensitive keys are ignored with a warning, the other keys apply.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.sanitize import terminal_safe
from paicli.tools.atomic import atomic_write

SENSITIVE_KEYS = ("base_url", "api_key", "approval", "allow")


@dataclass(frozen=True)
class TrustRequest:
    """What the user is asked to confirm: the file and the sensitive values it sets (the key hidden)."""

    path: Path
    values: dict[str, str]


ConfirmTrust = Callable[[TrustRequest], bool]
Warn = Callable[[str], None]


def warn_on_stderr(message: str) -> None:
    print(f"paicli: warning: {terminal_safe(message)}", file=sys.stderr)


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TrustStore:
    """~/.paicli/trusted.json: {"version": 1, "configs": {"/abs/repo/.paicli/config.toml": "<sha256>"}}."""

    def __init__(self, home: Path) -> None:
        self.path = home / ".paicli" / "trusted.json"

    def is_trusted(self, config: Path) -> bool:
        known = self._load().get(_key(config))
        return known is not None and known == _hash_of(config)

    def trust(self, config: Path) -> None:
        configs = self._load()
        digest = _hash_of(config)
        if digest is None:
            return
        configs[_key(config)] = digest
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps({"version": 1, "configs": configs}, indent=2) + "\n")

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or unreadable: nothing is trusted (fails closed)
        configs = data.get("configs") if isinstance(data, dict) else None
        if not isinstance(configs, dict):
            return {}
        return {str(k): str(v) for k, v in configs.items()}


def screen_workspace_config(
    data: Mapping[str, Any],
    path: Path,
    *,
    home: Path,
    confirm: ConfirmTrust | None = None,
    warn: Warn = warn_on_stderr,
) -> dict[str, Any]:
    """The workspace config's values to apply: all of them when trusted (or confirmed now), else
    all but the sensitive ones, with a warning that names what was ignored."""
    values = dict(data)
    sensitive = [key for key in SENSITIVE_KEYS if key in values]
    if not sensitive:
        return values
    store = TrustStore(home)
    if store.is_trusted(path):
        return values
    if confirm is not None and confirm(TrustRequest(path, {k: _shown(k, values[k]) for k in sensitive})):
        store.trust(path)
        return values
    warn(
        f"ignoring {', '.join(sensitive)} from {path}: this repository's config is not trusted yet "
        "(start paicli here interactively to review and trust it)"
    )
    return {key: value for key, value in values.items() if key not in SENSITIVE_KEYS}


def prompt_overrides(workspace: Path) -> list[Path]:
    folder = workspace / ".paicli" / "prompts"
    return sorted(path for path in folder.glob("**/*.md") if path.is_file()) if folder.is_dir() else []


def screen_prompt_overrides(
    workspace: Path, *, home: Path, confirm: ConfirmTrust | None = None, warn: Warn = warn_on_stderr
) -> None:
    """A repository's `.paicli/prompts/*.md` replace paicli's own prompts, so they are applied only once
    trusted (see `paicli.agent.context.load_prompt`); asked here together, each file remembered by hash."""
    store = TrustStore(home)
    untrusted = [path for path in prompt_overrides(workspace) if not store.is_trusted(path)]
    if not untrusted:
        return
    names = ", ".join(path.relative_to(workspace / ".paicli" / "prompts").as_posix() for path in untrusted)
    if confirm is not None and confirm(TrustRequest(workspace / ".paicli" / "prompts", {"prompt overrides": names})):
        for path in untrusted:
            store.trust(path)
        return
    warn(f"ignoring this repository's prompt overrides ({names}): not trusted yet")


def _shown(key: str, value: Any) -> str:
    if key == "api_key":
        return "(a key; its value is not shown)"
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _key(config: Path) -> str:
    return os.path.realpath(config)


def _hash_of(config: Path) -> str | None:
    try:
        return fingerprint(config.read_bytes())
    except OSError:
        return None
