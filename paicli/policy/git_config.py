"""Whether git's configuration lets files the model can write decide what a "read-only" git command runs.

`.git/config` is out of the model's reach (the file tools protect `.git`), but what it *includes* may not
be: with `include.path = ../.gitconfig`, a `.gitconfig` written by the model set `diff.x.textconv`, a
`.gitattributes` said `* diff=x`, and `git diff` ran the model's program, every step allowed. So a git
command is not read-only (it asks) when:

- the repository's config, the user's (~/.gitconfig, $XDG_CONFIG_HOME/git/config) or the system's
  (/etc/gitconfig), or any file they include (`include.path`, `includeIf.*.path`, followed to a depth of
  `MAX_DEPTH`), includes a file inside the workspace, or sets `core.attributesFile` to one;
- any of those configures a diff or filter driver (`diff.NAME.textconv` or `.command`, `filter.NAME.*`)
  and the workspace holds a `.gitattributes` (which may name that driver for any file).

A config that cannot be read, or a workspace too large to search for `.gitattributes` in `MAX_ENTRIES`
entries, counts as the unsafe case (fail closed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

MAX_DEPTH = 10
MAX_ENTRIES = 20_000  # looked at while searching the workspace for a .gitattributes
MAX_CONFIG_BYTES = 1 << 20
_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")
_DRIVER_KEYS = {"diff": ("textconv", "command"), "filter": ("clean", "smudge", "process")}


def workspace_config(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why git's configuration lets workspace files choose what git runs here; None: it does not."""
    environment = os.environ if env is None else env
    workspace = Path(os.path.realpath(root))
    home = Path(environment.get("HOME", "~")).expanduser()
    xdg = Path(environment.get("XDG_CONFIG_HOME") or home / ".config")
    starts = [_repository_config(workspace), home / ".gitconfig", xdg / "git" / "config", Path("/etc/gitconfig")]
    drivers = False
    seen: set[Path] = set()
    pending = [(path, 0) for path in starts if path is not None]
    while pending:
        path, depth = pending.pop()
        real = Path(os.path.realpath(path))
        if real in seen:
            continue
        seen.add(real)
        if _inside(real, workspace):
            return f"git's configuration includes {real.relative_to(workspace)}, a file in the workspace"
        if depth > MAX_DEPTH:
            return "git's configuration includes files too deeply for paicli to follow"
        try:
            text = _read(real)
        except FileNotFoundError:
            continue
        except OSError:
            return f"git's configuration {real} cannot be read"
        for section, key, value in _entries(text):
            if key == "path" and section.split(".")[0] in ("include", "includeif") and value:
                pending.append((_resolve(value, real.parent, home), depth + 1))
            elif (section, key) == ("core", "attributesfile") and value:
                if _inside(Path(os.path.realpath(_resolve(value, workspace, home))), workspace):
                    return "git's core.attributesFile is a file in the workspace"
            elif key in _DRIVER_KEYS.get(section.split(".")[0], ()) and "." in section:
                drivers = True
    if drivers and _has_attributes(workspace):
        return "git's configuration sets diff or filter programs and the workspace has a .gitattributes to name them"
    return None


def _repository_config(workspace: Path) -> Path | None:
    dot_git = workspace / ".git"
    if dot_git.is_dir():
        return dot_git / "config"
    try:
        line = _read(dot_git).splitlines()[0] if dot_git.is_file() else ""
    except (OSError, IndexError):
        return None
    if not line.startswith("gitdir: "):
        return None
    gitdir = _resolve(line.removeprefix("gitdir: ").strip(), workspace, workspace)
    common = gitdir / "commondir"
    if common.is_file():
        try:
            gitdir = _resolve(_read(common).strip(), gitdir, gitdir)
        except OSError:
            return gitdir / "config"
    return gitdir / "config"


def _entries(text: str) -> list[tuple[str, str, str]]:
    """(section with its subsection, lower-case, key lower-case, value unquoted) of a git config file."""
    found: list[tuple[str, str, str]] = []
    section = ""
    for line in text.splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0] if '"' not in line else line
        if header := _SECTION.match(line):
            section = header.group(1).lower() + (f".{header.group(2)}" if header.group(2) is not None else "")
            rest = line[header.end() :]
            if not (entry := _ENTRY.match(rest)) or not rest.strip():
                continue
        elif not (entry := _ENTRY.match(line)):
            continue
        value = (entry.group(2) or "").strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        found.append((section.lower(), entry.group(1).lower(), value))
    return found


def _resolve(value: str, base: Path, home: Path) -> Path:
    if value.startswith("~/") or value == "~":
        return home / value[2:]
    return Path(value) if os.path.isabs(value) else base / value


def _inside(path: Path, workspace: Path) -> bool:
    return path.is_relative_to(workspace) and not path.is_relative_to(workspace / ".git")


def _read(path: Path) -> str:
    with open(path, "rb") as handle:
        return handle.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")


def _has_attributes(workspace: Path) -> bool:
    entries = 0
    for _folder, folders, files in os.walk(workspace):
        if ".gitattributes" in files:
            return True
        folders[:] = [name for name in folders if name != ".git"]
        entries += len(files) + len(folders)
        if entries > MAX_ENTRIES:
            return True
    return False
