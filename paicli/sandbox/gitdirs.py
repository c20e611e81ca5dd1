"""What of the workspace the user's own git reads and runs programs from, found by walking it.

A command in the sandbox may write the workspace, but not what makes the user's `git status` run a
program on the host afterwards:
- every git directory at any depth: each `.git` (folder or file), and the git directory a `.git` file
  points to when it lies in the workspace (a submodule's `../.git/modules/sub`, a worktree's);
- the folders `core.hooksPath` names (a repository's own config, the user's global or system config:
  a relative value means a folder in each repository, `.githooks/`), and the files `include.path` and
  `includeIf.*.path` pull into a repository's config;
- `.gitmodules`, and `.gitattributes` when any configuration defines a filter, diff or merge driver (a
  `.gitattributes` line then chooses which files run it).

`find_git_paths` lists them (bwrap.py binds each read-only; the file tools ask before writing them);
`GitState` remembers what is there before a command, so what appeared during it (a `.git` made by `git
init` or written into an uninitialised submodule's folder, where no read-only bind could stand) can be
told afterwards. Bounded: at most MAX_ENTRIES entries are looked at; symlinks are never followed.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.sandbox.folders import RACY_NS, Folders
from paicli.sandbox.writable import TOOL_CACHES

MAX_ENTRIES = 200_000
MAX_INCLUDE_DEPTH = 5
LOOKUP_TIMEOUT = 5.0
GIT_NAMES = frozenset({".git"})
ALWAYS_CONTROLLED = frozenset({".gitmodules"})
ATTRIBUTES = ".gitattributes"
_CONFIG_KEYS = re.compile(
    r"^(core\.hookspath|include\.path|includeif\..+\.path"
    r"|filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver)$"
)
_DRIVER = re.compile(r"^(filter|diff|merge)\.")
_INCLUDES = re.compile(r"^(include\.path|includeif\..+\.path)$")


def walk_folders(clock: Callable[[], int] = time.time_ns) -> Folders:
    """A cache of folder listings for these walks: the names they look for, never into a `.git`."""
    return Folders(GIT_NAMES | ALWAYS_CONTROLLED | {ATTRIBUTES} | set(TOOL_CACHES), not_into=GIT_NAMES, clock=clock)


_CONFIGS: dict[tuple[object, ...], dict[str, list[str]]] = {}  # config reads, by the files' versions
MAX_CONFIGS = 1000


@dataclass(frozen=True)
class GitPaths:
    """The git-controlled paths of a workspace, resolved, each inside it."""

    git_dirs: tuple[Path, ...] = ()  # `.git` entries and the git directories `.git` files point to
    controlled: tuple[Path, ...] = ()  # hooks folders, include targets, .gitmodules, .gitattributes
    complete: bool = True  # False: the walk stopped at MAX_ENTRIES
    drivers: bool = False  # some configuration defines a filter, diff or merge driver (.gitattributes matter)
    # Not git's, found by the same walk: the tool cache folders at any depth (writable.py binds them).
    tool_caches: tuple[Path, ...] = ()

    @property
    def paths(self) -> tuple[Path, ...]:
        return (*self.git_dirs, *self.controlled)


@dataclass(frozen=True)
class GitState:
    """What stood at each git-controlled path (device and inode), to tell what a command added."""

    seen: Mapping[Path, tuple[int, int]] = field(default_factory=dict)
    found: GitPaths = field(default_factory=lambda: GitPaths(), compare=False)  # the walk it came from

    def added(self, later: GitState) -> list[Path]:
        """The paths of `later` that hold something not seen in this state: made, not moved (a repository
        moved elsewhere in the workspace is still the user's; what took its old place is new)."""
        known = set(self.seen.values())
        return [path for path, ident in later.seen.items() if ident not in known]


def git_state(workspace: Path, env: Mapping[str, str] | None = None, folders: Folders | None = None) -> GitState:
    seen: dict[Path, tuple[int, int]] = {}
    found = find_git_paths(workspace, env, folders)
    for path in found.paths:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        seen[path] = (st.st_dev, st.st_ino)
    return GitState(seen, found)


def find_git_paths(workspace: Path, env: Mapping[str, str] | None = None, folders: Folders | None = None) -> GitPaths:
    root = Path(os.path.realpath(workspace))
    env = os.environ if env is None else env
    git = _git_program(root, env.get("PATH", os.defpath))
    user = _read_config(git, None, env) if git else {}
    repos: list[Path] = []  # folders holding a `.git`
    git_dirs: list[Path] = []
    controlled: list[Path] = []
    attributes: list[Path] = []
    caches: list[Path] = []
    walk = _Walk(root, walk_folders() if folders is None else folders)  # None: no memo, every folder read
    for where, name, is_dir in walk:
        if is_dir and name in TOOL_CACHES:
            caches.append(Path(where))
        elif name in GIT_NAMES:
            path = Path(where)
            repos.append(path.parent)
            git_dirs.append(path)
            if not is_dir and (target := _gitfile_target(path, root)) is not None:
                git_dirs.append(target)
        elif name in ALWAYS_CONTROLLED:
            controlled.append(Path(where))
        elif name == ATTRIBUTES:
            attributes.append(Path(where))
    drivers = any(_DRIVER.match(key) for key in user)
    for repo, git_dir in _repositories(repos, git_dirs, root):
        configs = _repo_configs(git_dir)
        hook_paths = list(user.get("core.hookspath", ()))
        for config in configs:
            values = _read_config(git, config, env) if git else {}
            drivers = drivers or any(_DRIVER.match(key) for key in values)
            hook_paths += values.get("core.hookspath", [])
            controlled += _includes(git, config, values, root, env, MAX_INCLUDE_DEPTH)
        for hooks in hook_paths:
            if (folder := _inside(_expand(hooks, repo), root)) is not None:
                controlled.append(folder)
    if drivers:
        controlled += attributes
    unique_dirs = list(dict.fromkeys(git_dirs))
    unique = [path for path in dict.fromkeys(controlled) if path not in unique_dirs]
    return GitPaths(
        tuple(unique_dirs), tuple(unique), complete=not walk.truncated, drivers=drivers, tool_caches=tuple(caches)
    )


class _Walk:
    """The entries below `root` named like GIT_NAMES, ALWAYS_CONTROLLED, ATTRIBUTES or TOOL_CACHES, as
    (path, name, is a folder), without following symlinks and without entering `.git` folders; at most
    MAX_ENTRIES entries looked at. Folder listings come from `folders` (folders.py: read again only where
    something changed). Strings, not Paths: a Path per entry was most of the walk's time."""

    def __init__(self, root: Path, folders: Folders) -> None:
        self.root = root
        self.folders = folders
        self.truncated = False

    def __iter__(self) -> Iterator[tuple[str, str, bool]]:
        count = 0
        stack = [str(self.root)]
        while stack:
            folder = stack.pop()
            listing = self.folders.listing(folder)
            if listing is None:
                continue
            count += listing.count
            if count > MAX_ENTRIES:
                self.truncated = True
                return
            for name, is_dir in listing.named:
                yield f"{folder}/{name}", name, is_dir
            stack += listing.below


def _git_program(root: Path, search_path: str) -> str | None:
    """git on the search path, never one inside the workspace."""
    folders = [
        entry
        for entry in search_path.split(os.pathsep)
        if os.path.isabs(entry) and not Path(os.path.realpath(entry)).is_relative_to(root)
    ]
    return shutil.which("git", path=os.pathsep.join(folders)) if folders else None


def _gitfile_target(path: Path, root: Path) -> Path | None:
    """The git directory a `.git` file (`gitdir: ../.git/modules/sub`) names, when it is in the workspace."""
    named = gitfile_names(path)
    return _inside(named, root) if named is not None else None


def gitfile_names(path: Path) -> Path | None:
    """The git directory a `.git` file names on its first line (`gitdir: ...`, relative to the file's folder),
    wherever it is; None when `path` is no such file."""
    try:
        with open(path, "rb") as handle:
            first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    return _expand(first.removeprefix("gitdir:").strip(), path.parent)


def _repositories(repos: list[Path], git_dirs: list[Path], root: Path) -> Iterator[tuple[Path, Path]]:
    """(work tree, git directory) of each `.git` found."""
    for repo in repos:
        dot_git = repo / ".git"
        if os.path.isdir(dot_git) and not os.path.islink(dot_git):
            yield repo, dot_git
        elif (target := _gitfile_target(dot_git, root)) is not None and target.is_dir():
            yield repo, target


def _repo_configs(git_dir: Path) -> list[Path]:
    common = common_dir(git_dir)
    configs = [git_dir / "config", *([common / "config"] if common is not None else [])]
    return [config for config in configs if config.is_file()]


def common_dir(git_dir: Path) -> Path | None:
    """The common git directory a linked worktree's git directory names in its `commondir` file, if any."""
    try:
        common = (git_dir / "commondir").read_text().strip()
    except OSError:
        return None
    return Path(os.path.normpath(git_dir / common)) if common else None


def _read_config(git: str, config: Path | None, env: Mapping[str, str]) -> dict[str, list[str]]:
    """`_run_config`, remembered for as long as the files it reads stay as they were (device, inode, size,
    times; a file changed within RACY_NS is read again): for the user's configuration the system and global
    files. A configuration that includes other files (which a command may change: `include.path =
    ../.gitconfig`) is read every time."""
    key = _config_key(git, config, env)
    if key is not None and (kept := _CONFIGS.get(key)) is not None:
        return kept
    values = _run_config(git, config, env)
    if key is not None and not any(_INCLUDES.match(name) for name in values):  # what it includes may change
        if len(_CONFIGS) >= MAX_CONFIGS:
            _CONFIGS.clear()
        _CONFIGS[key] = values
    return values


def _config_key(git: str, config: Path | None, env: Mapping[str, str]) -> tuple[object, ...] | None:
    home = env.get("HOME", os.path.expanduser("~"))
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = (
        [str(config)]
        if config is not None
        else ["/etc/gitconfig", os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    )
    now = time.time_ns()
    stats: list[tuple[int, ...] | None] = []
    for file in files:
        try:
            st = os.stat(file)
        except FileNotFoundError:
            stats.append(None)
            continue
        except OSError:
            return None
        if st.st_ctime_ns >= now - RACY_NS:
            return None
        stats.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return (git, *files, home, tuple(stats))


def _run_config(git: str, config: Path | None, env: Mapping[str, str]) -> dict[str, list[str]]:
    """The keys of `_CONFIG_KEYS` in one config file (None: the user's system and global files, their
    includes resolved), lower-cased, with their values in order. Reading config runs no program."""
    # --includes with --file too: a hooks folder or a driver set in an included file counts like one set in
    # the repository's own config (an include.path of ../.gitconfig is how a tracked file configures git)
    where = ["--file", str(config), "--includes"] if config is not None else ["--includes"]
    lookup = {k: v for k, v in env.items() if not k.startswith("GIT_")}
    lookup["HOME"] = env.get("HOME", os.path.expanduser("~"))
    try:
        done = subprocess.run(
            [git, "config", *where, "-z", "--get-regexp", _CONFIG_KEYS.pattern],
            cwd="/",
            env=lookup,
            capture_output=True,
            timeout=LOOKUP_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, list[str]] = {}
    for record in done.stdout.split(b"\0"):
        if not record:
            continue
        key, _, value = record.decode("utf-8", "replace").partition("\n")
        found.setdefault(key.lower(), []).append(value)
    return found


def _includes(
    git: str | None, config: Path, values: Mapping[str, list[str]], root: Path, env: Mapping[str, str], depth: int
) -> list[Path]:
    """The files a config includes that lie in the workspace, and theirs in turn (bounded)."""
    found: list[Path] = []
    for key, targets in values.items():
        if key != "include.path" and not key.startswith("includeif."):
            continue
        for target in targets:
            path = _inside(_expand(target, config.parent), root)
            if path is None:
                continue
            found.append(path)
            if git and depth > 0 and path.is_file():
                found += _includes(git, path, _read_config(git, path, env), root, env, depth - 1)
    return found


def _expand(value: str, base: Path) -> Path:
    if value == "~" or value.startswith("~/"):
        return Path(os.path.expanduser(value))
    return Path(os.path.normpath(base / value))


def _inside(path: Path, root: Path) -> Path | None:
    """`path` resolved (a symlink's target is what git reads), when it is in the workspace; else None."""
    real = Path(os.path.realpath(path))
    return real if real.is_relative_to(root) and real != root else None


def declares(workspace: Path, declared: Sequence[str], path: Path) -> bool:
    """Whether a plan task's `files` name `path` itself (`.githooks/`, `.gitattributes`): a git-controlled
    path is writable only when named, never because a folder above it was."""
    relative = path.relative_to(workspace).as_posix() if path.is_relative_to(workspace) else None
    return relative is not None and any(os.path.normpath(entry.strip()) == relative for entry in declared)


def remove_added(path: Path, root: Path) -> bool:
    """Remove a git-controlled path a command made (never through a symlink, never outside `root`)."""
    if not path.is_relative_to(root) or path == root:
        return False
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        return False
    return True
