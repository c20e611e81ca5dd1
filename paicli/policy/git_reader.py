"""`git` as a reader: read-only only in the workspace's own top-level repository, run from its root.

A model can write a repository of its own anywhere in the workspace (`sub/HEAD`, `sub/objects/`,
`sub/refs/`, `sub/config`, or those at the root when there is no `.git`); its config can run programs
(`core.fsmonitor`, `diff.external`, `core.pager`, aliases) when a "read-only" git command reads it. So a
git command is SAFE only when the shell is at the workspace root, the root holds a real `.git` (which
the file tools never write), and nothing points git elsewhere (`-C`, `--git-dir`, `--work-tree`, `GIT_*`
variables, which make the command ASK anyway), and git's configuration lets no workspace file choose a
program (an included config in the workspace, or diff and filter drivers with a `.gitattributes`:
paicli/policy/git_config.py). `-c`/`--config-env` keys that can run programs
(unless `-c` sets them empty) and `--exec-path=DIR` are OPAQUE: they need a human even in yolo.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from paicli.policy.git_config import workspace_config
from paicli.shell.git_options import GIT_GLOBAL_VALUED
from paicli.shell.syntax import Word

READ_ONLY = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "describe",
        "shortlog",
        "branch",
        "tag",
        "remote",
    }
)
_LISTING_OPTIONS = frozenset(
    {
        "-a",
        "-r",
        "-v",
        "-vv",
        "-l",
        "--list",
        "--all",
        "--remotes",
        "--show-current",
        "--verbose",
        "--no-color",
        "--color",
        "-n",
    }
)
_UNSAFE_OPTIONS = (
    "--output",
    "--ext-diff",
    "-o",
    "--exec",
    "--upload-pack",
    "--run",
    "--no-index",
    "--open-files-in-pager",
    "-O",
    "--contents",
    "--show-signature",
    "--exclude-from",
    "-X",
    "--exclude-per-directory",
    "--verify",
)
_NAME_LISTS = ("--pathspec-from-file",)
# Configuration keys that only change what git prints or records; any other key may run a program.
_HARMLESS_KEYS = (
    "user.",
    "color.",
    "advice.",
    "core.quotepath",
    "core.autocrlf",
    "core.safecrlf",
    "core.abbrev",
    "init.defaultbranch",
    "log.",
    "diff.noprefix",
    "diff.renames",
    "diff.algorithm",
    "diff.context",
    "merge.conflictstyle",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "rebase.autosquash",
    "status.",
    "column.ui",
    "commit.gpgsign",
    "tag.gpgsign",
    "gc.auto",
    "maintenance.auto",
    "fetch.prune",
    "i18n.",
    "branch.sort",
    "tag.sort",
    "versionsort.",
)
_GLOBAL_FLAGS = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "--bare",
        "-p",
        "--paginate",
        "--no-lazy-fetch",
        "--no-advice",
    }
)
# Every git builtin a model might name; anything else may be an alias from a repository's config.
BUILTINS = READ_ONLY | frozenset(
    {
        "add",
        "am",
        "apply",
        "archive",
        "bisect",
        "bundle",
        "checkout",
        "cherry",
        "cherry-pick",
        "clean",
        "clone",
        "commit",
        "config",
        "fetch",
        "format-patch",
        "fsck",
        "gc",
        "grep",
        "init",
        "ls-remote",
        "ls-tree",
        "merge",
        "merge-base",
        "mv",
        "notes",
        "pull",
        "push",
        "range-diff",
        "rebase",
        "reflog",
        "reset",
        "restore",
        "revert",
        "rev-list",
        "rm",
        "show-ref",
        "sparse-checkout",
        "stash",
        "submodule",
        "switch",
        "worktree",
        "cat-file",
        "for-each-ref",
        "hash-object",
        "update-index",
        "update-ref",
        "symbolic-ref",
        "var",
        "version",
        "help",
        "whatchanged",
        "count-objects",
        "verify-commit",
        "verify-tag",
        "maintenance",
        "annotate",
        "difftool",
        "mergetool",
        "request-pull",
        "send-email",
        "instaweb",
        "daemon",
        "remote",
        "prune",
        "repack",
        "replace",
        "credential",
        "show-branch",
        "name-rev",
        "check-ignore",
        "check-attr",
        "check-ref-format",
        "diff-tree",
        "diff-files",
        "diff-index",
        "merge-tree",
        "read-tree",
        "write-tree",
        "commit-tree",
        "interpret-trailers",
        "column",
        "stripspace",
        "fast-export",
        "fast-import",
        "rerere",
        "stage",
        "lfs",
        "citool",
        "gui",
        "backfill",
        "checkout-index",
        "merge-file",
        "patch-id",
        "mktree",
        "mktag",
        "pack-objects",
        "unpack-objects",
        "verify-pack",
        "index-pack",
        "show-index",
        "hook",
        "bugreport",
        "diagnose",
        "replay",
    }
)


def dynamic_global_option(args: tuple[Word, ...]) -> str | None:
    """Why git's options before the subcommand are a human's call: one only known when it runs can be
    `-c core.pager=CODE` or `--exec-path=DIR` (`git -c "core.pager=$P" log`, `git $OPTIONS log`)."""
    index = 0
    while index < len(args) and (args[index].text.startswith("-") or not args[index].static):
        option = args[index].text.partition("=")[0]
        end = index + (2 if option in GIT_GLOBAL_VALUED and "=" not in args[index].text else 1)
        for word in args[index:end]:
            if not word.static:
                return f"git gets an option only known when it runs ({word.text}), which can make it run programs"
        index = end
    return None


def check_git(args: tuple[Word, ...], root: Path, at_root: bool) -> tuple[str, bool] | None:
    """None when `git args` is read-only here; else (why, opaque) where opaque means a human must look."""
    index = 0
    elsewhere = False
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        option, equals, value = text.partition("=")
        if option in GIT_GLOBAL_VALUED and not equals:
            value = args[index + 1].text if index + 1 < len(args) else ""
            index += 1
        index += 1
        if option in ("-c", "--config-env"):
            key, assigned, setting = value.partition("=")
            key = key.lower()
            cleared = option == "-c" and assigned and not setting  # `-c credential.helper=`: names no program
            if not cleared and not key.startswith(tuple(k.lower() for k in _HARMLESS_KEYS)):
                return f"git {option} {key} can make git run programs", True
            return f"git {option} changes git's configuration for this command", False
        if option == "--exec-path" and (equals or (index < len(args) and value)):
            return "git --exec-path runs git's programs from another folder", True
        if option in ("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"):
            elsewhere = True
        elif option not in _GLOBAL_FLAGS and option not in GIT_GLOBAL_VALUED:
            return f"git {option} is not an option paicli knows", False
    rest = args[index:]
    sub = rest[0].text if rest else ""
    if sub and sub not in BUILTINS:  # the repository's own config too: a command can write it
        return f"git {sub} may be an alias, whose `!` runs shell commands paicli cannot see", True
    if elsewhere:
        return "git pointed at another folder or repository may run what that repository configures", False
    if not at_root:
        return "git run below the workspace root may use a repository the model wrote", False
    if not own_repository(root):
        return "the workspace has no .git of its own, so git may use a repository the model wrote", False
    if why := workspace_config(root):  # include.path = ../.gitconfig, textconv drivers and .gitattributes
        return why, False
    if not sub:
        return None
    if sub not in READ_ONLY:
        return f"git {sub} changes the repository or talks to a remote", False
    options = rest[1:]
    for word in options:
        option = word.text.split("=", 1)[0]
        if option in _NAME_LISTS:
            return f"git {sub} {option} reads file names paicli cannot check", False
        if option in _UNSAFE_OPTIONS or any(len(option) > 3 and u.startswith(option) for u in _UNSAFE_OPTIONS):
            return f"git {sub} {option} can write files, run programs or read outside the repository", False
    listing = _LISTING_OPTIONS - {"-v"} if sub == "tag" else _LISTING_OPTIONS  # `git tag -v` runs gpg
    if sub in {"branch", "tag", "remote"} and any(w.text not in listing for w in options):
        return f"git {sub} with these arguments changes the repository", False
    return None


def git_subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    """(the subcommand, its arguments) of `git ARGS`, past git's own options; ("", []) when there is none."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option, equals, _ = args[index].partition("=")
        index += 2 if option in GIT_GLOBAL_VALUED and not equals else 1
    return (args[index], list(args[index + 1 :])) if index < len(args) else ("", [])


def own_repository(root: Path) -> bool:
    """Whether the workspace root holds a real `.git` folder (or a `gitdir:` file) that is not a symlink."""
    dot_git = root / ".git"
    if dot_git.is_symlink():
        return False
    if dot_git.is_dir():
        return (dot_git / "HEAD").is_file() and (dot_git / "objects").is_dir() and (dot_git / "refs").is_dir()
    if dot_git.is_file():
        try:
            with open(dot_git, encoding="utf-8", errors="replace") as handle:
                return handle.read(8) == "gitdir: "
        except OSError:
            return False
    return False
