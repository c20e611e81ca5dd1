"""Commands contained by bubblewrap (`bwrap`): the kernel, not a parser, decides what they can touch.

The mounts, in the order bwrap applies them (a later one covers an earlier one):
- the whole filesystem read-only; `/dev` minimal (null, zero, random, tty, ...; no disks) and read-only
  apart from a size-capped `/dev/shm`; `/proc` of its own (its own PID namespace: paicli's processes and
  their environments are not there);
- a private, size-capped `/tmp` (before the workspace, which may live under /tmp); `/run`, `/var/run`
  and `$XDG_RUNTIME_DIR` hidden (docker.sock, the ssh and gpg agents, the session bus);
- what a private /tmp would hide but commands need: the home folder (read-only) and the folders on PATH
  (read-only, paicli's editor stand-ins among them);
- tool caches writable where they exist (`~/.cache`, `~/.npm`, `~/.cargo/registry`, `~/go/pkg/mod`, plus
  `sandbox_writable`), so builds and installs keep working;
- the workspace writable (or, for a plan task, read-only except its declared `files`, a new file as that
  file alone, and the tool caches in it at any depth: a COMMAND or VERIFICATION task that declares none
  writes none; writable.py);
  its `.git/` and `.paicli/` read-only, so hooks and config cannot be planted;
- every git directory and git-controlled path at any depth read-only (gitdirs.py); without the network,
  /dev/null over each socket file found outside the hidden folders, looked for before each command
  (sockets.py);
- secrets hidden: an empty read-only folder (or an empty file) over each of `~/.ssh`, `~/.aws`, ... and
  `sandbox_hide` that exists.
Namespaces: all of them (user, PID, network, IPC, UTS, cgroup), the network kept only with
`sandbox_network`. The command's `bash` is PID 1 of its own PID namespace (`--as-pid-1`): when it exits,
the kernel kills every process of the namespace, `setsid` and `nohup` children included, before bwrap
returns (with bwrap's own init as PID 1, bwrap could return while they were still dying);
`--die-with-parent` does the same when the command times out or is cancelled (its process group,
bwrap, is killed). No capabilities, also when paicli runs as root. The environment loses the agent
sockets and the runtime folder.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.sandbox.containment import Containment, Placeholder
from paicli.sandbox.gitdirs import GitPaths, declares, find_git_paths
from paicli.sandbox.memos import FolderMemos
from paicli.sandbox.sockets import find_sockets
from paicli.sandbox.writable import READ_ONLY_IN_WORKSPACE, cache_environment, declared_writable, tool_caches

__all__ = ["BwrapSandbox", "declared_writable"]

CACHES = ("~/.cache", "~/.npm", "~/.cargo/registry", "~/go/pkg/mod")
SECRETS = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.paicli",
)
RUNTIME_FOLDERS = ("/run", "/var/run")
# Variables naming sockets and folders that are hidden inside (TMPDIR & co: the private /tmp is the one).
UNSET = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "TMPDIR",
    "TMP",
    "TEMP",
)
TMP_BYTES = 1 << 30  # the private /tmp: memory-backed, so capped
SHM_BYTES = 256 << 20
RUN_BYTES = 1 << 20
HIDDEN_BYTES = 4096


@dataclass(frozen=True)
class BwrapSandbox:
    program: str  # bwrap's absolute path
    home: Path
    network: bool = False
    writable: tuple[str, ...] = ()  # sandbox_writable: more folders commands may write ("~/.m2")
    hide: tuple[str, ...] = ()  # sandbox_hide: more paths commands may not see ("~/.config/op")
    sizes: bool = True  # this bwrap knows --size (0.5 and later)
    statuses: bool = True  # this bwrap knows --json-status-fd (0.3.2 and later; launch.py)
    # the session's folder listings (memos.py): a walk or scan before a command reads only what changed
    memos: FolderMemos = field(default_factory=FolderMemos, compare=False, repr=False)

    @property
    def name(self) -> str:
        return "bwrap"

    def command(
        self, argv: Sequence[str], env: Mapping[str, str], containment: Containment
    ) -> tuple[list[str], dict[str, str]]:
        options = self.options(containment, env.get("PATH", ""))
        environment = self.environment(env)
        if containment.writable is not None:  # the workspace read-only: caches it lacks go to the private /tmp
            environment.update(cache_environment(_real(containment.workspace), " ".join(argv), environment))
        return [self.program, *options, "--", *argv], environment

    def with_status(self, argv: Sequence[str], fd: int) -> list[str] | None:
        """`argv` as `command` built it, with bwrap writing its status to `fd` (`--json-status-fd`: a line
        `{ "exit-code": N }` once the command has run and ended, paicli/sandbox/launch.py); None when this
        bwrap cannot."""
        if not self.statuses:
            return None
        return [argv[0], "--json-status-fd", str(fd), *argv[1:]]

    def describe(self) -> str:
        network = "network on" if self.network else "no network"
        return f"bubblewrap: only the workspace and tool caches writable, .git/ read-only, secrets hidden, {network}"

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        return {name: value for name, value in env.items() if name not in UNSET}

    def options(self, containment: Containment, search_path: str = "") -> list[str]:
        workspace = _real(containment.workspace)
        home = _real(self.home)
        options = [
            "--unshare-all",
            *(["--share-net"] if self.network else []),
            "--die-with-parent",
            "--as-pid-1",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            *self._size(SHM_BYTES),
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
            "--proc",
            "/proc",
            *self._size(TMP_BYTES),
            "--tmpfs",
            "/tmp",
        ]
        for folder in self._runtime_folders(workspace):
            options += [*self._size(RUN_BYTES), "--tmpfs", folder]
        if self.network and (resolver := _resolver_under_run()) is not None:
            options += ["--ro-bind", resolver, resolver]  # /etc/resolv.conf often links into /run
        for kept in _kept_under_tmp(home, workspace, search_path):
            options += ["--ro-bind", str(kept), str(kept)]
        for cache in self._existing(CACHES + self.writable):
            options += ["--bind", str(cache), str(cache)]
        if (found := containment.git_paths) is None:  # else the walk just before the command (gitdirs.py)
            env = {**os.environ, "PATH": search_path or os.environ.get("PATH", os.defpath)}
            found = find_git_paths(workspace, env, self.memos.git)  # the one walk, tool caches found too
        options += _workspace_mounts(workspace, containment.writable, search_path, containment.placeholders, found)
        options += git_mounts(workspace, containment.writable, found)
        if not self.network:
            covered = [*map(Path, self._runtime_folders(workspace)), *self._existing(SECRETS + self.hide)]
            options += socket_mounts(self.sockets(workspace), [workspace, *covered])
        for hidden in self._not_nested(self._existing(SECRETS + self.hide)):
            if workspace.is_relative_to(hidden):
                continue  # hiding it would hide the workspace
            if os.path.isdir(hidden):
                options += [*self._size(HIDDEN_BYTES), "--tmpfs", str(hidden), "--remount-ro", str(hidden)]
            else:
                options += ["--ro-bind", "/dev/null", str(hidden)]
        return [*options, "--chdir", str(workspace)]

    def sockets(self, workspace: Path) -> tuple[Path, ...]:
        """The socket files outside /run, /tmp and the workspace, looked for again before each command
        (sockets.py; a `stat` per folder where nothing changed), so a listener started after paicli is
        covered too."""
        skip = (Path("/tmp"), *map(Path, RUNTIME_FOLDERS))
        return tuple(find_sockets(self.home, skip=skip, away=(workspace,), folders=self.memos.sockets))

    def _size(self, size: int) -> list[str]:
        return ["--size", str(size)] if self.sizes else []

    def _expand(self, path: str) -> Path:
        if path == "~" or path.startswith("~/"):
            return self.home / path[2:]
        return Path(path)

    def _existing(self, paths: Sequence[str]) -> Iterator[Path]:
        """Each path that exists, resolved (a mount over a symlink lands on its target anyway), once."""
        seen: set[Path] = set()
        for raw in paths:
            path = self._expand(raw)
            if path.is_absolute() and os.path.lexists(path):
                real = _real(path)
                if real != Path("/") and real not in seen and os.path.exists(real):
                    seen.add(real)
                    yield real

    @staticmethod
    def _not_nested(paths: Iterator[Path]) -> list[Path]:
        """Folders before what they hold, and nothing inside a folder already hidden (an empty one)."""
        ordered = sorted(paths, key=lambda path: len(path.parts))
        return [p for i, p in enumerate(ordered) if not any(p.is_relative_to(q) for q in ordered[:i] if q != p)]

    def _runtime_folders(self, workspace: Path) -> list[str]:
        folders: list[str] = []
        runtime_dir = os.environ.get("XDG_RUNTIME_DIR", "")
        for raw in (*RUNTIME_FOLDERS, runtime_dir):
            if not raw or not os.path.isabs(raw) or os.path.islink(raw) or not os.path.isdir(raw):
                continue  # /var/run is usually a link to /run
            folder = _real(Path(raw))
            if workspace.is_relative_to(folder) or any(folder.is_relative_to(f) for f in map(Path, folders)):
                continue
            if folder.is_relative_to("/tmp"):
                continue  # the private /tmp hides it already
            folders.append(str(folder))
        return folders


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _resolver_under_run() -> str | None:
    target = os.path.realpath("/etc/resolv.conf")
    return target if target.startswith(("/run/", "/var/run/")) and os.path.isfile(target) else None


def _kept_under_tmp(home: Path, workspace: Path, search_path: str) -> list[Path]:
    """The home folder and PATH folders that live under /tmp (tests, throw-away homes, paicli's editor
    stand-ins), bound read-only over the private /tmp; the workspace is mounted on its own."""
    kept: list[Path] = []
    candidates = [home, *(Path(entry) for entry in search_path.split(os.pathsep) if os.path.isabs(entry))]
    for candidate in candidates:
        real = _real(candidate)
        if real == Path("/tmp") or not real.is_relative_to("/tmp") or not real.is_dir():
            continue
        if (real.parent / "pyvenv.cfg").is_file() and real.parent != Path("/tmp"):
            real = real.parent  # a virtual environment's bin: its programs need its lib/ (site-packages) too
        if real.is_relative_to(workspace) or any(real.is_relative_to(k) for k in kept):
            continue
        kept = [k for k in kept if not k.is_relative_to(real)]
        kept.append(real)
    return kept


def _workspace_mounts(
    workspace: Path,
    declared: tuple[str, ...] | None,
    search_path: str,
    placeholders: list[Placeholder] | None = None,
    found: GitPaths | None = None,
) -> list[str]:
    """The workspace writable, or read-only but for a plan task's declared files (none at all for a task
    that declares none) and the tool caches in it at any depth (writable.py); .git, .paicli and the
    workspace folders on PATH (an activated `.venv/bin`) read-only either way: a program planted there
    would run outside the sandbox, by paicli (`git`) or by you (the file tools refuse those folders too)."""
    if declared is None:
        options = ["--bind", str(workspace), str(workspace)]
    else:
        options = ["--ro-bind", str(workspace), str(workspace)]
        for cache in tool_caches(found.tool_caches if found is not None else ()):
            options += ["--bind", str(cache), str(cache)]
        for path in declared_writable(workspace, declared, placeholders):
            options += ["--bind", str(path), str(path)]
    for name in READ_ONLY_IN_WORKSPACE:
        inside = workspace / name
        if os.path.lexists(inside):
            real = _real(inside)
            if real.is_relative_to(workspace) and os.path.exists(real):
                options += ["--ro-bind", str(real), str(real)]
    for entry in filter(os.path.isabs, search_path.split(os.pathsep)):
        folder = _real(Path(entry))
        if folder != workspace and folder.is_relative_to(workspace) and folder.is_dir():
            options += ["--ro-bind", str(folder), str(folder)]
    return options


def git_mounts(workspace: Path, declared: tuple[str, ...] | None, found: GitPaths) -> list[str]:
    """Every git directory and git-controlled path of the workspace (paicli/sandbox/gitdirs.py) read-only,
    at any depth; a hooks folder, include target, .gitmodules or .gitattributes that a plan task named in
    its `files` stays writable for it (a git directory never does)."""
    options: list[str] = []
    for path in found.paths:
        if path not in found.git_dirs and declared is not None and declares(workspace, declared, path):
            continue
        real = _real(path)
        if real.is_relative_to(workspace) and real != workspace and os.path.exists(real):
            options += ["--ro-bind", str(real), str(real)]
    return options


def socket_mounts(sockets: Sequence[Path], covered: Sequence[Path]) -> list[str]:
    """/dev/null over each socket that is still one and not already hidden (or the workspace's own): a
    connection to it is refused."""
    options: list[str] = []
    for path in sockets:
        if any(path.is_relative_to(folder) for folder in covered):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        options += ["--ro-bind", "/dev/null", str(path)]
    return options
