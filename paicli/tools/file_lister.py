"""The workspace's files as git would show them: the one list every tool that looks at many files uses.

Two views of one listing:

- the checkpoint view is what git shows (`git ls-files --cached --others --exclude-standard`): tracked
  files and the untracked ones no ignore rule hides (`.gitignore` at every level, `.git/info/exclude`, the
  global excludes), without `.paicli/`, as checkpoints take them (paicli/app/checkpoints/snapshot.py);
- the model's view is the same minus what `.paicliignore` (gitignore syntax, at the workspace root) names:
  what glob_files, grep_code, list_dir, `@` completion and the planner's overview show.

Nested repositories and submodules are listed file by file, each by its own rules (as checkpoints take
them). Outside a git repository, or without git, the same rules are read with pathspec: `.gitignore` files
at every level (a deeper file wins, a negation cannot bring back a file of an ignored folder), the user's
global excludes (`$XDG_CONFIG_HOME/git/ignore`), and, in the model's view only, the folders nobody wants
(`node_modules/`, `.venv/`, caches: `DEFAULT_IGNORES`).

git runs with the environment of paicli/tools/git_env.py, found outside the workspace: a repository's
config cannot make it run a program (`core.fsmonitor`, hooks), nor the user's (the listing's commands need
none of their values); its calls are in paicli/tools/git_listing.py.
Symlinks are listed as files, as git lists them, and never descended; the model's view leaves out those
that resolve outside the workspace. Whoever reads a listed file opens it below the workspace (beneath.py),
so a link changed since the listing, or a file deleted since, is skipped there.
"""

from __future__ import annotations

import bisect
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from paicli.tools.git_listing import Found, Git, SharedGit

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec  # imported when first needed: 20 to 80 ms (it loads its backends)

View = Literal["model", "checkpoint"]

PAICLI_IGNORE = ".paicliignore"
CHECKPOINT_EXCLUDED = (".paicli/",)  # what checkpoints leave out besides git's rules (snapshot.PAICLI_EXCLUDES)
VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})  # never listed, never searched, whatever the rules say
DEFAULT_IGNORES = (  # outside git, where no .gitignore says what is junk
    "node_modules/",
    ".venv/",
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".nox/",
)
NESTED_DEPTH = 8  # repositories inside repositories, listed this deep
IGNORE_FILE_BYTES = 1 << 20  # a larger .gitignore or .paicliignore is not read


@dataclass(frozen=True)
class Listing:
    """Files relative to the workspace (posix, sorted), and whether git made the list. `versions`: for each
    tracked file git found unchanged since its index (same stat data, or same content), the object id of
    that content; a file not in it (untracked, changed, marked assume-unchanged, outside git) is to be
    looked at; only files of `files` have one. The repository index uses it to skip a stat per file."""

    files: tuple[str, ...]
    by_git: bool
    versions: Mapping[str, str] = field(default_factory=dict)
    nested: bool = False  # a repository or submodule inside the workspace was listed (by its own rules)


def list_files(
    workspace: Path, *, view: View = "model", git: SharedGit | None = None, worktree: bool = True
) -> Listing:
    """The workspace's files in one view (see the module docstring). `git`: the git of this tool run (one
    configuration look-up for all its calls). `worktree` false: git does not check the tracked files
    against the work tree, so a deleted one is still listed and `versions` is empty (for grep_code, which
    stats every file anyway: paicli/tools/git_listing.py)."""
    root = Path(os.path.realpath(workspace))
    found = Found()
    base_rules = _base_rules(junk=view == "model")
    where = _Where(git.get() if git is not None else Git.find(root, lookup=False), base_rules, worktree)
    files, by_git = _list_folder(root, "", where, NESTED_DEPTH, found)
    shown = _shown(root, files, found.links, view)
    kept = set(shown)  # versions only for the files shown: relist drops a changed file's with the file
    versions = {path: oid for path, oid in found.versions.items() if path in kept}
    return Listing(tuple(sorted(shown)), by_git, versions, nested=found.nested)


def relist(workspace: Path, previous: Listing, changed: set[str], git: SharedGit) -> Listing | None:
    """The model's view after the files and folders `changed` (relative paths; a folder stands for all
    below it) changed and nothing else did: `previous` with git's listing of those paths in their place.
    None when that cannot be told so (no git, a repository appeared inside): list afresh. A tracked file
    among them is given no version (it is to be looked at)."""
    root = Path(os.path.realpath(workspace))
    found_git = git.get()
    found = Found()
    listed = found_git.listing(root, found, worktree=False, paths=sorted(changed)) if found_git else None
    if listed is None or listed[1] or not previous.by_git or previous.nested:
        return None
    present = [path for path in listed[0] if os.path.lexists(root / path)]  # a tracked file deleted is not
    fresh = sorted(_shown(root, present, found.links, "model"))
    kept, dropped = _without(previous.files, changed)
    versions = dict(previous.versions)
    for path in dropped:
        versions.pop(path, None)
    return Listing(tuple(sorted(kept + fresh)), True, versions)  # two sorted runs: merged in one pass


def _without(files: tuple[str, ...], changed: set[str]) -> tuple[list[str], list[str]]:
    """`files` (sorted) without each changed path and all below it, and what was taken out. The paths
    below a folder are one run of a sorted list, found by bisection: no step per listed file."""
    runs: list[tuple[int, int]] = []
    for path in changed:
        at = bisect.bisect_left(files, path)
        if at < len(files) and files[at] == path:
            runs.append((at, at + 1))
        start = bisect.bisect_left(files, path + "/")
        end = bisect.bisect_left(files, path + "0", start)  # "0" follows "/"
        if start < end:
            runs.append((start, end))
    kept: list[str] = []
    dropped: list[str] = []
    position = 0
    for start, end in sorted(runs):
        start = max(start, position)
        kept.extend(files[position:start])
        dropped.extend(files[start:end])
        position = max(position, end)
    kept.extend(files[position:])
    return kept, dropped


def _shown(root: Path, files: list[str], links: set[str], view: View) -> list[str]:
    """The listed files a view shows (see the module docstring)."""
    shown = [path for path in files if not path.startswith(CHECKPOINT_EXCLUDED)]
    if view == "model":
        outside = {link for link in links if not Path(os.path.realpath(root / link)).is_relative_to(root)}
        shown = [path for path in shown if path not in outside] if outside else shown
        hidden = paicli_ignore(root)
        if hidden is not None:
            shown = [path for path in shown if not hidden.match_file(path)]
    return shown


def all_files(workspace: Path) -> list[str]:
    """Every regular file and symlink below the workspace, ignored or not, sorted, without the insides of
    version control folders: what `include_ignored` searches. Symlinked folders are not descended."""
    return sorted(_every_file(Path(os.path.realpath(workspace))))


def _every_file(root: Path) -> Iterator[str]:
    stack = [""]
    while stack:
        prefix = stack.pop()
        entries = _scan(root / prefix) if prefix else _scan(root)
        folders = []
        for name, kind in entries:
            if kind == "dir":
                if name not in VCS_FOLDERS:
                    folders.append(f"{prefix}{name}/")
            elif kind in ("file", "link"):
                yield prefix + name
        stack.extend(reversed(folders))


def ignored_entries(
    workspace: Path, folder: str, entries: Iterable[tuple[str, bool]], *, git: SharedGit | None = None
) -> set[str]:
    """Of the `entries` (name, is a folder) of `folder` (relative, "" for the workspace), the names the
    model's view leaves out: ignored by git's rules (or, outside git, by the same rules read here), by
    `.paicliignore`, or inside a folder that is. list_dir marks them rather than hiding them."""
    root = Path(os.path.realpath(workspace))
    prefix = folder.strip("/") + "/" if folder.strip("/") not in ("", ".") else ""
    given = list(entries)
    named = [(name, is_dir) for name, is_dir in given if name not in VCS_FOLDERS]
    found_git = git.get() if git is not None else Git.find(root, lookup=False)
    ignored = found_git.check_ignore(root / prefix, named) if found_git is not None else None
    if ignored is None:
        ignored = _walk_rules_ignored(root, prefix, named)
    hidden = paicli_ignore(root)
    if hidden is not None:
        ignored |= {name for name, is_dir in named if hidden.match_file(prefix + name + ("/" if is_dir else ""))}
    ignored |= {name for name, is_dir in given if name in VCS_FOLDERS and is_dir}
    return ignored


def is_ignored(workspace: Path, relative: str, *, is_dir: bool = False, git: SharedGit | None = None) -> bool:
    """Whether one file or folder (relative posix path) is out of the model's view: what grep_code refuses
    to search unless asked to include ignored files."""
    folder, _, name = relative.strip("/").rpartition("/")
    if any(part in VCS_FOLDERS for part in relative.split("/")):
        return True
    return name in ignored_entries(workspace, folder, [(name, is_dir)], git=git)


def paicli_ignore(root: Path) -> GitIgnoreSpec | None:
    """The rules of the workspace's `.paicliignore`, None when there is none."""
    lines = _read_rules(root / PAICLI_IGNORE)
    return _spec(tuple(lines)) if lines else None


def git_output(workspace: Path, arguments: list[str], *, git: SharedGit | None = None) -> bytes | None:
    """The output of `git ARGUMENTS` run in the workspace with the listing's environment (nothing a
    repository's config names is run), None without git, outside a repository or when git fails. With
    `git` (the listing's: paicli/tools/git_listing.py), for listing commands only; without, the user's
    own values of the neutralised keys are looked up and kept."""
    root = Path(os.path.realpath(workspace))
    found_git = git.get() if git is not None else Git.find(root)
    return found_git.run(root, arguments) if found_git is not None else None


@dataclass(frozen=True)
class _Where:
    """How a listing goes, the same at every level: git (None: no git), the rules below every .gitignore,
    and whether git checks tracked files against the work tree."""

    git: Git | None
    rules: list[_Rules]
    worktree: bool


def _list_folder(folder: Path, prefix: str, where: _Where, depth: int, found: Found) -> tuple[list[str], bool]:
    """The files below `folder` (relative to the workspace: `prefix` + path), by git when `folder` is in a
    repository, else by the rules read here; and whether git listed them."""
    here = Found()
    git = where.git
    listed = git.listing(folder, here, worktree=where.worktree) if git is not None else None
    if listed is None:
        return _walk(folder, prefix, where, depth, found), False
    files, nested = listed
    found.links.update(prefix + path for path in here.links)
    found.versions.update((prefix + path, object_id) for path, object_id in here.versions.items())
    out = [prefix + path for path in files]
    found.nested = found.nested or bool(nested)
    for inner in nested:
        inside = folder / inner
        if depth > 0 and _is_real_folder(inside) and os.path.lexists(inside / ".git"):
            out.extend(_list_folder(inside, f"{prefix}{inner}/", where, depth - 1, found)[0])
    return out, True


def _is_real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# ---- the same rules without git ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Rules:
    base: str  # the folder whose ignore file this is, relative to the walk's root, "" or ending with "/"
    spec: GitIgnoreSpec


def _base_rules(*, junk: bool) -> list[_Rules]:
    """The rules below every .gitignore: the user's global excludes, and for the model's view (not for
    checkpoints, which take what git would) the junk folders."""
    rules = [_Rules("", _spec(DEFAULT_IGNORES))] if junk else []
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    user = _read_rules(config / "git" / "ignore")
    if user:
        rules.append(_Rules("", _spec(tuple(user))))
    return rules


def _decision(rules: list[_Rules], path: str) -> bool:
    """Whether `path` (relative to the walk's root; a folder ends with "/") is ignored: the deepest rule
    file with a pattern for it decides, and within one file the last matching pattern."""
    for rule in reversed(rules):
        if path.startswith(rule.base):
            include = rule.spec.check_file(path[len(rule.base) :]).include
            if include is not None:
                return include
    return False


def _walk(root: Path, prefix: str, where: _Where, depth: int, found: Found) -> list[str]:
    out: list[str] = []
    stack: list[tuple[str, list[_Rules]]] = [("", where.rules)]
    while stack:
        relative, inherited = stack.pop()
        folder = root / relative if relative else root
        own = _read_rules(folder / ".gitignore")
        levels = [*inherited, _Rules(relative, _spec(tuple(own)))] if own else inherited
        subfolders: list[tuple[str, list[_Rules]]] = []
        for name, kind in _scan(folder):
            path = relative + name
            if kind == "dir":
                if name in VCS_FOLDERS or _decision(levels, path + "/"):
                    continue
                inside = folder / name
                if where.git is not None and depth > 0 and os.path.lexists(inside / ".git"):
                    out.extend(_list_folder(inside, f"{prefix}{path}/", where, depth - 1, found)[0])
                else:
                    subfolders.append((path + "/", levels))
            elif kind in ("file", "link") and not _decision(levels, path):
                out.append(prefix + path)
                if kind == "link":
                    found.links.add(prefix + path)
        stack.extend(reversed(subfolders))
    return out


def _walk_rules_ignored(root: Path, prefix: str, entries: list[tuple[str, bool]]) -> set[str]:
    """`ignored_entries` outside git: the rule files from the workspace down to the folder."""
    levels = _base_rules(junk=True)
    parts = [part for part in prefix.split("/") if part]
    for depth in range(len(parts) + 1):
        relative = "".join(part + "/" for part in parts[:depth])
        if depth and (parts[depth - 1] in VCS_FOLDERS or _decision(levels, relative)):
            return {name for name, _ in entries}  # the folder itself is ignored
        own = _read_rules(root / relative / ".gitignore")
        if own:
            levels = [*levels, _Rules(relative, _spec(tuple(own)))]
    return {name for name, is_dir in entries if _decision(levels, prefix + name + ("/" if is_dir else ""))}


def _scan(folder: Path) -> list[tuple[str, str]]:
    """(name, "dir" | "file" | "link" | "other") of a folder's entries, sorted; symlinks never followed."""
    try:
        with os.scandir(folder) as scan:
            items = sorted(scan, key=lambda item: item.name)
    except OSError:
        return []
    out = []
    for item in items:
        try:
            if item.is_symlink():
                kind = "link"
            elif item.is_dir(follow_symlinks=False):
                kind = "dir"
            else:
                kind = "file" if item.is_file(follow_symlinks=False) else "other"
        except OSError:
            continue
        out.append((item.name, kind))
    return out


def _read_rules(path: Path) -> list[str]:
    """The lines of an ignore file, [] when it is absent, not a regular file or too large."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > IGNORE_FILE_BYTES:
            return []
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


@lru_cache(maxsize=256)
def _spec(lines: tuple[str, ...]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)
