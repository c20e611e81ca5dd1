"""What a plan task's commands may write in the sandbox, when the workspace is read-only but for its `files`.

- Its declared paths (`declared_writable`): a declared folder (`tests/`) as a whole, created if missing;
  an existing file itself; a file that does not exist yet, that file alone (an empty placeholder is made so
  it can be bound, and removed again when the command wrote nothing there). A file bound alone cannot be
  replaced by renaming another file over it (`sed -i`, editors and formatters that write a temporary file
  beside it): its folder is read-only. Such a program needs the folder declared (blocked.py says so).
- Tool caches (`TOOL_CACHES`) at any depth that exist (`pkg/sub/__pycache__/`, `sub/.pytest_cache/`),
  found by the walk that finds the git-controlled paths (gitdirs.py) and bound writable, so tests and
  checks run in a task that declares nothing. A cache that does not exist yet cannot be made in a
  read-only folder, and the tools that fail without theirs (pytest, mypy, ruff) look for it where they
  are run from: they are pointed at the one at the top of the workspace, or at a folder in the command's
  private /tmp when there is none (`cache_environment`). Python itself carries on when it cannot write a
  `__pycache__/`.

`could_write` is the same rule as a question about one path, for telling afterwards whose a change can be
(paicli/app/checkpoints/attribution.py).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from paicli.common import paths
from paicli.sandbox.placeholder import Placeholder

READ_ONLY_IN_WORKSPACE = (".git", ".paicli")
# Caches of tools that run tests and checks, writable in the workspace even where nothing else is.
TOOL_CACHES = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis")
MAX_CACHES = 256  # bound at most, the shallowest first (a virtualenv in the workspace holds thousands)
# Where a tool's cache goes when the workspace has none at its top: the private /tmp of the command.
CACHE_HOME = "/tmp/paicli-caches"
CACHE_VARIABLES = {".mypy_cache": "MYPY_CACHE_DIR", ".ruff_cache": "RUFF_CACHE_DIR"}
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
PYTEST_OFF = "no:cacheprovider"
MAX_CONFIG_BYTES = 1 << 20


def tool_caches(found: Sequence[Path]) -> list[Path]:
    """The cache folders to bind, from those the walk found: the shallowest MAX_CACHES, none inside another."""
    kept: list[Path] = []
    for path in sorted(found, key=lambda p: (len(p.parts), p)):
        if len(kept) >= MAX_CACHES:
            break
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def cache_environment(workspace: Path, command: str, env: Mapping[str, str]) -> dict[str, str]:
    """Variables pointing pytest, mypy and ruff at one cache wherever the command runs them from: the one at
    the top of the workspace when it is there (bound writable), by its absolute path, so a command run in a
    subfolder uses it too; else a folder in the private /tmp. A variable the user set is kept. pytest has
    no variable: `-o cache_dir=...` joins PYTEST_ADDOPTS, but not where its cache is turned off (`-p
    no:cacheprovider` in the command, the variable or a configuration file at the top), where the option
    would be unknown to it (an error where warnings are)."""
    extra: dict[str, str] = {}
    for name, variable in CACHE_VARIABLES.items():
        if variable not in env:
            extra[variable] = _cache_folder(workspace, name)
    if not _pytest_cache_off(workspace, command, env):
        option = shlex.quote(f"cache_dir={_cache_folder(workspace, '.pytest_cache')}")
        extra["PYTEST_ADDOPTS"] = " ".join(filter(None, [env.get("PYTEST_ADDOPTS", ""), "-o", option]))
    return extra


def _cache_folder(workspace: Path, name: str) -> str:
    top = workspace / name
    return str(top) if _is_folder(top) else f"{CACHE_HOME}/{name}"


def _pytest_cache_off(workspace: Path, command: str, env: Mapping[str, str]) -> bool:
    if PYTEST_OFF in command or PYTEST_OFF in env.get("PYTEST_ADDOPTS", ""):
        return True
    for name in PYTEST_CONFIGS:
        config = workspace / name
        try:
            readable = config.is_file() and not config.is_symlink() and config.stat().st_size <= MAX_CONFIG_BYTES
            if readable and PYTEST_OFF in config.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def could_write(declared: Sequence[str] | None, relative: str, names: paths.Names) -> bool:
    """Whether a command held to `declared` (None: not held, the whole workspace) could have written the
    workspace path `relative` (as git names it): a declared file, anything below a declared folder, or
    anything in a tool cache."""
    if declared is None:
        return True
    if any(part in TOOL_CACHES for part in relative.split("/")[:-1]):
        return True
    for entry in declared:
        normal = paths.normalise(entry)
        if normal is not None and names.covers(normal, relative):
            return True
    return False


def declared_writable(
    workspace: Path, declared: Sequence[str], placeholders: list[Placeholder] | None = None
) -> list[Path]:
    """What a plan task's `files` make writable for its commands (see the module docstring), each path
    once, placeholders made added to `placeholders`. Paths leading out of the workspace, through a
    symlink, or into .git/ or .paicli/ count for nothing (the plan contract refuses them; this is the
    second line). A file inside a declared folder needs nothing of its own (`lib/` and `lib/.git`: a
    placeholder file would stop `git init lib`)."""
    made = placeholders if placeholders is not None else []
    found: list[Path] = []
    folders = [f for f in map(paths.normalise, declared) if f is not None and paths.is_folder(f)]
    for entry in declared:
        relative = paths.normalise(entry)
        if relative is None or paths.declared_problem(relative):
            continue
        if not paths.is_folder(relative) and any(
            folder == paths.WHOLE_WORKSPACE or relative.startswith(folder) for folder in folders
        ):
            continue  # writable through its declared folder: no placeholder, which would stand in its way
        parts = [] if relative == paths.WHOLE_WORKSPACE else relative.rstrip("/").split("/")
        if parts and parts[0] in READ_ONLY_IN_WORKSPACE:
            continue
        target = workspace.joinpath(*parts)
        if paths.is_folder(relative) or target.is_dir():
            path = _make_folders(workspace, parts, made)
        elif os.path.lexists(target):
            path = _plain_file(workspace, parts)
        else:
            path = _new_file(workspace, parts, made)
        if path is not None and path not in found:
            found.append(path)
    return found


def _is_folder(path: Path) -> bool:
    return not os.path.islink(path) and path.is_dir()


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _make_folders(workspace: Path, parts: list[str], made: list[Placeholder]) -> Path | None:
    """workspace/parts, each folder created if missing, never through a symlink; None when one is in the way."""
    current = workspace
    for part in parts:
        current = current / part
        if os.path.islink(current):
            return None
        if not os.path.exists(current):
            try:
                os.mkdir(current)
                made.append(Placeholder.of(current, folder=True))
            except FileExistsError:
                if os.path.islink(current) or not os.path.isdir(current):
                    return None
            except OSError:
                return None
        elif not os.path.isdir(current):
            return None
    return current if _real(current) == current else None


def _new_file(workspace: Path, parts: list[str], made: list[Placeholder]) -> Path | None:
    """An empty file where a declared one does not exist yet (its folders made first), never through a
    symlink; None when something is in the way."""
    folder = _make_folders(workspace, parts[:-1], made)
    if folder is None:
        return None
    target = folder / parts[-1]
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    except FileExistsError:
        return _plain_file(workspace, parts)
    except OSError:
        return None
    made.append(Placeholder.of(target))
    return target


def _plain_file(workspace: Path, parts: list[str]) -> Path | None:
    folder = workspace.joinpath(*parts[:-1])
    target = folder / parts[-1]
    if _real(folder) != folder or os.path.islink(target) or not os.path.isfile(target):
        return None
    return target
