"""Commands that destroy work inside the workspace: deleting files, discarding changes, rewriting history.

The sandbox protects the machine, not the user's work, so these still ask in `ask` mode and are refused
in `auto` (unless an allow rule covers them) when every other command that would only ask because it
writes or runs project code runs unasked in the sandbox. Judged on one simple command's words (its name
normalised: `/bin/rm` is `rm`); the commands inside `find -exec`, `xargs`, `bash -c` and wrappers are
simple commands of their own, so `find . -exec rm {} +` is caught by `rm`.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from paicli.policy.git_reader import git_subcommand

# What the checkpoints leave out (paicli/app/checkpoints/store.py DEFAULT_MAX_FILE_BYTES): larger files.
UNCOVERED_BYTES = 5_000_000
_CHECK_TIMEOUT = 5.0
_ONE_BY_ONE = 20  # paths asked about one at a time when git refuses the batch

_DELETERS = {
    "rm": "rm deletes files",
    "shred": "shred destroys files",
    "unlink": "unlink deletes a file",
    "truncate": "truncate cuts files",
    "srm": "srm deletes files",
    "wipe": "wipe destroys files",
}
_GIT_ALWAYS = {
    "clean": "deletes untracked files",
    "rm": "deletes files",
    "filter-branch": "rewrites history",
    "filter-repo": "rewrites history",
    "prune": "deletes objects",
    "update-ref": "moves or deletes refs",
    "worktree": "may remove a worktree's files",
    "reflog": "may expire the reflog",
}
_RESET_DISCARDING = ("--hard", "--merge", "--keep")
_FORCES = ("-f", "--force", "--force-with-lease", "--mirror", "--delete", "-d", "--prune")


def destructive_reason(words: tuple[str, ...]) -> str | None:
    """Why this simple command destroys work in the workspace; None when it does not look like it."""
    if not words:
        return None
    name, args = words[0], words[1:]
    if name in _DELETERS:
        return _DELETERS[name]
    if name == "find" and any(a in ("-delete",) for a in args):
        return "find -delete deletes files"
    if name == "rsync" and any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        return "rsync --delete deletes files"
    if name == "git":
        return _git(list(args))
    return None


def _git(args: list[str]) -> str | None:
    sub, rest = git_subcommand(args)
    options = [a for a in rest if a.startswith("-")]
    if sub in _GIT_ALWAYS and (sub != "worktree" or (rest[:1] in (["remove"], ["prune"]))):
        return f"git {sub} {_GIT_ALWAYS[sub]}"
    if sub == "reset" and any(o in _RESET_DISCARDING for o in options):
        return "git reset --hard discards changes"
    if sub == "checkout" and (any(o in ("-f", "--force", "--") for o in rest) or "." in rest):
        return "git checkout of paths discards changes"
    if sub == "restore" and not (("--staged" in options or "-S" in options) and not _restores_worktree(options)):
        return "git restore discards changes"
    if sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        return f"git stash {rest[0]} deletes stashed changes"
    if sub == "branch" and any(o in ("-D", "--delete", "-d", "-M", "-C") or o.startswith("-D") for o in options):
        return "git branch -D deletes a branch"
    if sub == "push" and (any(o in _FORCES for o in options) or any(a.startswith("+") for a in rest)):
        return "git push --force rewrites or deletes a remote's history"
    if sub == "gc" and any(o.startswith("--prune") for o in options):
        return "git gc --prune deletes objects"
    return None


def _restores_worktree(options: list[str]) -> bool:
    return "--worktree" in options or "-W" in options


def uncovered_reason(paths: list[Path], root: Path, doing: str = "it overwrites") -> str | None:
    """Why what `doing` does to one of `paths` (existing files in the workspace `root`, resolved) could not
    be undone: the checkpoints leave out git-ignored files and files over UNCOVERED_BYTES. None when it
    could. `doing` starts the sentence: "it overwrites", "cp overwrites", "rm deletes"."""
    small: list[Path] = []
    for path in dict.fromkeys(paths):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not path.is_relative_to(root):
            continue
        if st.st_size > UNCOVERED_BYTES:
            size = f"{st.st_size / 1e6:.1f} MB"
            return f"{doing} {_shown(path, root)} ({size}), too big for the checkpoints: undo cannot bring it back"
        small.append(path)
    if (ignored := _first_ignored(small, root)) is not None:
        return (
            f"{doing} {_shown(ignored, root)}, which git ignores, so the checkpoints leave it out: undo cannot "
            "bring it back"
        )
    return None


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _first_ignored(paths: list[Path], root: Path) -> Path | None:
    """The first of `paths` git ignores, asked once for all of them (`git check-ignore --stdin`); one at a
    time when git refuses the batch (a path in a nested repository stops it)."""
    if not paths:
        return None
    if (found := _ignored(paths, root)) is not None:
        ignored = set(found)
        return next((path for path in paths if path in ignored), None)
    return next((path for path in paths[:_ONE_BY_ONE] if _ignored([path], root)), None)


def _ignored(paths: list[Path], root: Path) -> list[Path] | None:
    """Which of `paths` git ignores ([] for none); None when git could not say."""
    git = shutil.which("git")
    if git is None:
        return []
    try:
        done = subprocess.run(
            [git, "-c", "core.fsmonitor=false", "check-ignore", "-z", "--stdin"],
            cwd=root,
            input=b"".join(os.fsencode(path) + b"\0" for path in paths),
            capture_output=True,
            timeout=_CHECK_TIMEOUT,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode not in (0, 1):
        return None
    return [Path(os.fsdecode(name)) for name in done.stdout.split(b"\0") if name]
