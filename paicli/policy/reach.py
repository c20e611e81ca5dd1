"""What a command prefix in a rule does not cover: words that reach outside the workspace.

An allow rule or an `unsandboxed` prefix names a command (`git commit`, `git push`), not every file that
command may be pointed at. With `unsandboxed = ["git commit"]`, `git commit -F ~/.ssh/id_rsa` once read a
private key into a commit the model could read back, and `git push /tmp/x.git HEAD:loot` pushed outside.
So a prefix covers a command only when no word after it (the words the rule does not name) reaches out:

- a path outside the workspace, found in a word, after `=` (`--file=/x`), after a short option's letters
  (`-F/x`, `-aF~/x`), or after `@` (`-d@/etc/passwd`, `@file` argument lists): absolute paths that
  resolve outside, `~`, `..` that climbs out, symlinks that lead out (resolved);
- a URL or remote that is not a name: `https://…`, `file:…`, `user@host:path`, `ext::sh -c …`;
- for git, the options that choose another repository, configuration or program: `-C`, `-c`,
  `--git-dir`, `--work-tree`, `--exec-path`, `--config-env`, `--upload-pack`, `--receive-pack`,
  `--exec`, `--template`, `--namespace` and `--super-prefix`, whatever their value.

A rule that names such a word covers it (`allow = ["git push /srv/mirror.git"]`): it is part of the prefix.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from paicli.policy.risk import Classification

GIT_REDIRECTING = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--exec-path",
        "--config-env",
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--template",
        "--namespace",
        "--super-prefix",
    }
)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(//|:)|file:|[^\s/:@]+@[^\s/:]+:", re.IGNORECASE)
_SHORT_VALUE = re.compile(r"-[A-Za-z0-9]+?([/~.].*)")  # -F/abs, -aF~/x, -C.. : the value glued to the flags


def beyond(words: tuple[str, ...], prefix: tuple[str, ...], workspace: Path | None) -> str | None:
    """Why `words` (which start with `prefix`) reach beyond what the prefix names; None: they do not."""
    root = Path(os.path.realpath(workspace)) if workspace is not None else None
    program = os.path.basename(words[0]) if words else ""
    for word in words[len(prefix) :]:
        if program == "git" and (word.split("=", 1)[0] in GIT_REDIRECTING or _glued_git_option(word)):
            return f"{word} points git at another repository, configuration or program"
        if _URL.match(word) or _URL.match(word.split("=", 1)[-1]) or _URL.match(word.partition("@")[2]):
            return f"{word} names a place outside the workspace"
        for candidate in _candidates(word):
            if _outside(candidate, root):
                return f"{word} names a file outside the workspace"
    return None


def _glued_git_option(word: str) -> bool:
    """`-C..` and `-ccore.x=y`: git's short options with their value glued on."""
    return len(word) > 2 and word[:2] in ("-C", "-c")


def _candidates(word: str) -> list[str]:
    """The paths a word may hand to its program: itself, the value after `=`, after a short option's
    letters, and after `@`."""
    found: list[str] = []
    if not word.startswith("-"):
        found.append(word)
    if "=" in word:
        found.append(word.split("=", 1)[1])
    if (glued := _SHORT_VALUE.fullmatch(word)) is not None and not word.startswith("--"):
        found.append(glued.group(1))
    if "@" in word:
        found.append(word.rsplit("@", 1)[1])
    return [path for path in found if path]


def _outside(path: str, root: Path | None) -> bool:
    if path.startswith("~"):
        return True
    if root is None:
        return os.path.isabs(path) or ".." in Path(path).parts
    try:
        resolved = Path(os.path.realpath(root / path))  # an absolute `path` replaces `root`
    except (OSError, ValueError):
        return True
    return not resolved.is_relative_to(root)


ENVIRONMENT_BUILTINS = frozenset({"env", "export", "declare", "typeset", "readonly", "local", "set", "alias"})


def changes_environment(found: Classification | None) -> bool:
    """Whether a command line sets variables or aliases for what it runs (`GIT_DIR=/x git push`, `env
    LD_PRELOAD=… git push`, `export …; git push`): then no `unsandboxed` prefix takes it out of the sandbox.
    A line the classifier could not read, or with a finding not about one command, counts as doing so."""
    if found is None:
        return True
    for finding in found.findings:
        if finding.words is None or "=" in finding.words[0]:
            return True
    return any(command[0] in ENVIRONMENT_BUILTINS for command in found.commands)
