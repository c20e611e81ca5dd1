"""Prompt assembly: packaged prompts (overridable per project) plus project rules (PAI.md, AGENTS.md)."""

from __future__ import annotations

import os
from pathlib import Path

from paicli.common.errors import ConfigError
from paicli.tools.confined import read_path
from paicli.tools.file_lister import list_files
from paicli.trusted_folders import trusted_prompt

TOOL_MODES = (None, "executor")
OVERVIEW_ENTRIES = 300  # the overview the planner had before the repository map (bench context compares)
RULES_CAP = 24_000  # characters of project rules injected into a system prompt
RULE_FILE_BYTES = 1 << 20  # a rule file larger than this is not read at all

_PACKAGE = Path(__file__).resolve().parent.parent


def packaged_prompts_dir() -> Path:
    """Inside a wheel the prompts ship as paicli/_prompts; in a source checkout they are ../prompts."""
    shipped = _PACKAGE / "_prompts"
    return shipped if shipped.is_dir() else _PACKAGE.parent / "prompts"


def load_prompt(name: str, workspace: Path, home: Path | None = None) -> str:
    """`name` like "system.md" or "modes/planner.md". A repository's `.paicli/prompts/<name>` wins, but
    only once the user has trusted that file (paicli/trusted_folders.py; `home` holds the trust store)."""
    override = trusted_prompt(workspace, home, name) if home is not None else None
    if override is not None:
        return override
    return (packaged_prompts_dir() / name).read_text(encoding="utf-8")


def rule_files(workspace: Path, home: Path) -> list[Path]:
    candidates = [
        home / ".paicli" / "PAI.md",
        workspace / "PAI.md",
        workspace / ".paicli" / "PAI.md",
        workspace / "AGENTS.md",
    ]
    return [path for path in candidates if path.is_file()]


def project_rules(workspace: Path, home: Path, cap: int = RULES_CAP) -> str:
    """All rule files in order, each under its own heading, cut at `cap` characters in total."""
    parts: list[str] = []
    for path in rule_files(workspace, home):
        try:
            text = _read_rule_file(path, workspace, home).strip()
        except (OSError, ConfigError):
            continue
        if text:
            label = "~/.paicli/PAI.md" if path.is_relative_to(home / ".paicli") else path.relative_to(workspace)
            parts.append(f"## From {label}\n\n{text}")
    rules = "\n\n".join(parts)
    if len(rules) > cap:
        rules = rules[:cap] + "\n\n[project rules cut at 24,000 characters]"
    return rules


def _read_rule_file(path: Path, workspace: Path, home: Path) -> str:
    """A regular file of at most RULE_FILE_BYTES. A repository's own must resolve inside the workspace: an
    AGENTS.md symlinked to ~/.aws/credentials would otherwise go into every prompt."""
    if not path.is_relative_to(home / ".paicli") and not Path(os.path.realpath(path)).is_relative_to(
        os.path.realpath(workspace)
    ):
        raise ConfigError(f"{path} leads outside the workspace")
    return read_path(path, limit=RULE_FILE_BYTES).decode("utf-8", errors="replace")


def system_prompt(mode: str | None, workspace: Path, home: Path) -> str:
    """The system prompt of one mode ("executor", "planner", ...; None = chat). Deterministic: the same
    inputs give byte-identical text, so provider prompt caches hit across the tasks of a plan.
    Modes that use tools (chat, executor) start from system.md; the tool-free ones only get their own.
    The planner's knowledge of the files is the repository map in its user message (paicli/repomap): it
    depends on the goal, and the system prompt must not."""
    sections = [load_prompt("system.md", workspace, home).strip()] if mode in TOOL_MODES else []
    if mode:
        sections.append(load_prompt(f"modes/{mode}.md", workspace, home).strip())
    sections.append(f"# Workspace\n\nThe workspace root is {workspace}. Paths are relative to it.")
    rules = project_rules(workspace, home)
    if rules:
        sections.append(f"# Project rules\n\nFollow these rules of the project.\n\n{rules}")
    return "\n\n".join(sections) + "\n"


def workspace_overview(workspace: Path, limit: int = OVERVIEW_ENTRIES) -> str:
    """The model's view of the workspace (git's files minus .paicliignore: paicli/tools/file_lister.py), each
    folder before its files, one per line, at most `limit` lines: git-ignored files are never included."""
    lines: list[str] = []
    shown: set[str] = set()
    for path in list_files(workspace).files:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            if folder not in shown:
                shown.add(folder)
                lines.append(folder)
        lines.append(path)
        if len(lines) > limit:
            break
    if not lines:
        return "(empty)"
    if len(lines) > limit:
        return "\n".join([*lines[:limit], f"[... more entries left out; the list stops at {limit}]"])
    return "\n".join(lines)
