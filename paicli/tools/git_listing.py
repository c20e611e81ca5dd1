"""The file lister's git: `ls-files` and `check-ignore` run with paicli's neutralised environment.

git is found outside the workspace and runs with the environment of paicli/tools/git_env.py (a
repository's config cannot make it run a program: `core.fsmonitor`, hooks). That environment keeps the
user's own values of the keys it neutralises (their ssh command, credential helper, signing program),
which takes a `git config` look-up; the listing's own commands (`ls-files`, `check-ignore`, `rev-parse`)
use none of those keys, so for them every key is set to its neutral value and nothing is looked up
(`Git.find(root, lookup=False)`: a process less; the output is the same, a user's fsmonitor only made
it faster). Other commands (`git log` for the repository map) keep the look-up. `SharedGit` is the
listing's git for all the calls of one tool run, whichever thread makes them first (grep_code lists the
files while rg's walk asks git for the ignored paths).

`Git.listing` has two depths: checked against the work tree (`--deleted --modified`: git stats every
tracked file, drops the deleted ones and says which are unchanged, with their object ids), or not (the
index and the untracked files only: a deleted tracked file is still listed, for a caller that stats each
file anyway, as grep_code does; under half the git CPU time).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.git_env import (
    EXTERNAL_DIFF,
    GitConfigView,
    git_safety_environment,
    program_outside,
    read_git_config,
)

GIT_TIMEOUT = 60.0
_DROPPED_GIT_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
# No user value kept: every neutralised key at its neutral value, diff.external refused.
ALL_NEUTRAL = GitConfigView(from_repository=frozenset({EXTERNAL_DIFF}))


@dataclass
class Found:
    """What a listing learns on the way: the symlinks among the files, the unchanged tracked files."""

    links: set[str] = field(default_factory=set)
    versions: dict[str, str] = field(default_factory=dict)
    nested: bool = False  # a repository or submodule inside was listed


@dataclass(frozen=True)
class Git:
    program: str
    env: Mapping[str, str]

    @classmethod
    def find(cls, root: Path, *, lookup: bool = True) -> Git | None:
        """git from PATH (outside the workspace) with the environment that neutralises the configuration
        seen from `root`, keeping the user's own values (`lookup`: one `git config` run) or not (for the
        listing's commands, which use none of those keys); None without git."""
        base = {name: value for name, value in os.environ.items() if name not in _DROPPED_GIT_VARIABLES}
        program = program_outside("git", root, base.get("PATH", os.defpath))
        if program is None:
            return None
        env = dict(base)
        env.update(git_safety_environment(base, read_git_config(root, base) if lookup else ALL_NEUTRAL))
        env["GIT_OPTIONAL_LOCKS"] = "0"  # a listing never writes the index
        return cls(program, env)

    def run(self, folder: Path, arguments: list[str], stdin: bytes | None = None) -> bytes | None:
        """The output of `git ARGUMENTS` in `folder`, None when git fails (not a repository, a timeout)."""
        try:
            done = subprocess.run(
                [self.program, *arguments],
                cwd=folder,
                env=dict(self.env),
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def listing(
        self, folder: Path, found: Found, *, worktree: bool = True, paths: list[str] | None = None
    ) -> tuple[list[str], list[str]] | None:
        """(files, nested repositories and submodules) of the repository `folder` is in, relative to it;
        the symlinks among the files (by the index's mode for a tracked file) and, checked against the
        work tree (`worktree`), the unchanged tracked files are added to `found`. Not checked, a tracked
        file deleted from the work tree is listed. `paths`: only these files and folders (literal)."""
        checks = ["--deleted", "--modified"] if worktree else []
        arguments = ["--stage", "-v", "--cached", *checks, "--others", "--exclude-standard"]
        literal, only = (["--literal-pathspecs"], ["--", *paths]) if paths is not None else ([], [])
        # -v: lower-case tags for assume-unchanged
        output = self.run(folder, [*literal, "ls-files", "-z", *arguments, *only])
        if output is None:
            return None
        files: dict[str, None] = {}
        gone: set[str] = set()
        changed: set[str] = set()
        ids: dict[str, str] = {}
        nested: list[str] = []
        for record in output.split(b"\0"):
            tag, _, rest = record.partition(b" ")
            if not rest:
                continue
            if tag == b"?":  # untracked: a path, `dir/` for a repository inside
                path = os.fsdecode(rest)
                if path.endswith("/"):
                    nested.append(path.rstrip("/"))
                else:
                    files[path] = None
                    if os.path.islink(folder / path):
                        found.links.add(path)
                continue
            meta, _, raw = rest.partition(b"\t")  # "mode object stage" TAB path
            path = os.fsdecode(raw)
            if tag in (b"R", b"S", b"r", b"s"):  # deleted from the work tree; skip-worktree (a sparse checkout)
                gone.add(path)
            elif tag in (b"C", b"c"):  # changed since git's index
                changed.add(path)
            elif meta.startswith(b"160000"):
                nested.append(path)
            else:
                files[path] = None
                mode, _, rest_of_meta = meta.partition(b" ")
                object_id, _, stage = rest_of_meta.partition(b" ")
                if worktree and tag == b"H" and stage == b"0":
                    ids[path] = object_id.decode("ascii", "replace")
                if mode == b"120000":
                    found.links.add(path)
        found.versions.update((path, oid) for path, oid in ids.items() if path not in changed and path not in gone)
        return [path for path in files if path not in gone], nested

    def check_ignore(self, folder: Path, entries: list[tuple[str, bool]]) -> set[str] | None:
        """The names of `entries` (in `folder`) git ignores; None outside a repository."""
        if self.run(folder, ["rev-parse", "--is-inside-work-tree"]) != b"true\n":
            return None
        if not entries:
            return set()
        names = b"".join(os.fsencode(name + ("/" if is_dir else "")) + b"\0" for name, is_dir in entries)
        try:
            done = subprocess.run(
                [self.program, "check-ignore", "-z", "--stdin"],
                cwd=folder,
                env=dict(self.env),
                input=names,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode not in (0, 1):  # 1: none is ignored
            return None
        return {os.fsdecode(name).rstrip("/") for name in done.stdout.split(b"\0") if name}


class SharedGit:
    """The listing's git for one workspace (`Git.find(root, lookup=False)`: for ls-files, check-ignore
    and rev-parse only), found once however many calls and threads ask for it: for the git calls of one
    tool run. Not for longer: PATH may change between runs. It also asks git once for the ignored untracked
    paths (`ignored`), for whichever of the run's threads needs them first."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self._lock = threading.Lock()
        self._looked_up = False
        self._git: Git | None = None
        self._ignored_lock = threading.Lock()
        self._ignored: tuple[int, list[str] | None] | None = None

    def get(self) -> Git | None:
        with self._lock:
            if not self._looked_up:
                self._git = Git.find(self.root, lookup=False)
                self._looked_up = True
            return self._git

    def ignored(self) -> tuple[int, list[str] | None]:
        """git's ignored untracked paths below the workspace (`ls-files --others --ignored --directory`: a
        folder where git stops at it ends with "/"; None outside a repository), with when git was asked
        (ns since the epoch): asked once for the run, the other threads wait for that answer."""
        with self._ignored_lock:
            if self._ignored is None:
                asked = time.time_ns()
                git = self.get()
                arguments = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
                output = git.run(self.root, arguments) if git is not None else None
                paths = None if output is None else [os.fsdecode(path) for path in output.split(b"\0") if path]
                self._ignored = (asked, paths)
            return self._ignored
