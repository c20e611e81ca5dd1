"""Git configuration that a repository's own config file cannot use to run programs.

A repository's `config` is written by whoever wrote the repository: a model can write a bare one
(`sub/HEAD`, `sub/objects/`, `sub/refs/`, `sub/config`) with `write_file`, and an archive or a copied
folder can bring a nested one. Several keys of that file name programs that "read-only" commands run
(`git status` runs `core.fsmonitor` and the post-index-change hook, `git diff` runs `diff.external`,
`git log --show-signature` and `git tag -v` run `gpg.program`, ...).

Configuration passed as GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n has the command line's
precedence: git reads it after the system, global and repository files, so it wins. Every such key is
set here to a value that runs nothing, or, when the user's own system or global configuration (or
their environment) sets it, to the user's value again: the user's credential helper, signing program
and ssh command keep working, a repository's do not. `safe.bareRepository=explicit` stops git from
picking up a bare repository it was not pointed at, which takes the model-written repository with
all of its config out of play. `diff.external` has no harmless value (any value takes over every
diff), so it is overridden only when the workspace's own repository sets it.

What environment configuration cannot neutralise: keys with a free-form name chosen by the repository,
`diff.<driver>.textconv` and `diff.<driver>.command`, `filter.<driver>.clean/smudge/process` and
`merge.<driver>.driver` (selected by `.gitattributes`), `remote.<name>.uploadpack/receivepack`,
`alias.*` (never used for built-in commands); `core.worktree`; and `diff.external` of a non-bare
repository below the workspace. They take effect from a non-bare repository's own `.git/config`: the
workspace's `.git/` is protected from the file tools, and a nested `.git` cannot be written by them.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Always these values, whatever the user's configuration says.
FORCED: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),
    ("protocol.ext.allow", "never"),  # `ext::` remote URLs run a command
)

# The user's own value when their system or global configuration has one, else the neutral value.
NEUTRAL: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),  # empty: no askpass program at all (GIT_TERMINAL_PROMPT=0 refuses the prompt)
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
)
# Multi-valued: an empty value clears the list built so far; the user's helpers are added back after it.
CREDENTIAL_HELPER = "credential.helper"
# Any value of diff.external, empty included, makes every `git diff` hand its work to that program, so
# it has no neutral value: it is overridden only where the workspace's repository sets it, with the
# user's own program, or with this refusal (git then stops with "external diff died").
EXTERNAL_DIFF = "diff.external"
NO_EXTERNAL_DIFF = (
    "echo 'paicli: an external diff program set in a repository config is not run; "
    "use git diff --no-ext-diff' >&2; false"
)

# Environment variables git prefers to the configuration. Commands run without a terminal: no pager,
# no editor, no password prompt, whatever the user's environment says.
FORCED_ENVIRONMENT: dict[str, str] = {
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
}
# Set (even empty), GIT_PROXY_COMMAND makes git skip every core.gitProxy entry; a user's own is kept.
DEFAULT_ENVIRONMENT: dict[str, str] = {"GIT_PROXY_COMMAND": ""}

_TRUSTED_SCOPES = {"system", "global", "command"}
_LOOKUP_TIMEOUT = 5.0


@dataclass(frozen=True)
class GitConfigView:
    """What the configuration seen from one folder says about the neutralised keys."""

    trusted: Mapping[str, Sequence[str]] = field(default_factory=dict)  # lower-case key → the user's values
    from_repository: frozenset[str] = frozenset()  # lower-case keys a repository's own files set


_UNKNOWN = GitConfigView(from_repository=frozenset({EXTERNAL_DIFF}))


def git_safety_environment(base: Mapping[str, str], view: GitConfigView) -> dict[str, str]:
    """The variables to add to `base` (a child's environment): GIT_CONFIG_* entries appended after any
    the user's environment already holds (the last value of a key wins), and the git variables above."""
    trusted = view.trusted
    entries: list[tuple[str, str]] = list(FORCED)
    for key, neutral in NEUTRAL:
        values = trusted.get(key.lower())
        entries.append((key, values[-1] if values else neutral))
    if "core.sshcommand" not in trusted and base.get("GIT_SSH") and not base.get("GIT_SSH_COMMAND"):
        # core.sshCommand would win over the user's GIT_SSH; say the same thing in its words.
        entries = [(k, shlex.quote(base["GIT_SSH"]) if k == "core.sshCommand" else v) for k, v in entries]
    entries.append((CREDENTIAL_HELPER, ""))
    entries.extend((CREDENTIAL_HELPER, value) for value in trusted.get(CREDENTIAL_HELPER, ()))
    if EXTERNAL_DIFF in view.from_repository:
        external = trusted.get(EXTERNAL_DIFF)
        entries.append((EXTERNAL_DIFF, external[-1] if external else NO_EXTERNAL_DIFF))

    added = {name: value for name, value in DEFAULT_ENVIRONMENT.items() if name not in base}
    added.update(FORCED_ENVIRONMENT)
    first = _first_free_index(base)
    for index, (key, value) in enumerate(entries, start=first):
        added[f"GIT_CONFIG_KEY_{index}"] = key
        added[f"GIT_CONFIG_VALUE_{index}"] = value
    added["GIT_CONFIG_COUNT"] = str(first + len(entries))
    if base.get("GIT_CONFIG_PARAMETERS"):
        # `git -c` settings (this variable) are read after the GIT_CONFIG_COUNT entries and the last value
        # wins: a `-c core.fsmonitor=...` or `-c protocol.ext.allow=always` in paicli's own environment
        # would undo the entries above, so they are appended there too (in the form every git reads).
        quoted = [_single_quoted(f"{key}={value}") for key, value in entries]
        added["GIT_CONFIG_PARAMETERS"] = " ".join([base["GIT_CONFIG_PARAMETERS"], *quoted])
    return added


def _single_quoted(text: str) -> str:
    """`text` as git quotes one `-c` setting in GIT_CONFIG_PARAMETERS (sq_quote)."""
    return "'" + text.replace("'", "'\\''") + "'"


def read_git_config(cwd: Path, env: Mapping[str, str]) -> GitConfigView:
    """The neutralised keys as configured for a command run in `cwd`: the user's own values (system and
    global files, the environment; conditional includes resolve as they would there) and which keys the
    repository's own files set. A bare repository at `cwd` is not even opened. Without git there is
    nothing to protect: an empty view. Any other failure (a timeout, a git too old for --show-scope)
    counts as a repository setting diff.external, so that it is overridden all the same."""
    lookup_env = dict(env)
    count = _first_free_index(env)
    for index, (key, value) in enumerate(FORCED, start=count):
        lookup_env[f"GIT_CONFIG_KEY_{index}"] = key
        lookup_env[f"GIT_CONFIG_VALUE_{index}"] = value
    lookup_env["GIT_CONFIG_COUNT"] = str(count + len(FORCED))
    keys = [key for key, _ in NEUTRAL] + [CREDENTIAL_HELPER, EXTERNAL_DIFF]
    pattern = "^(" + "|".join(key.lower().replace(".", r"\.") for key in keys) + ")$"
    git = program_outside("git", cwd, lookup_env.get("PATH", ""))
    if git is None:
        return GitConfigView()
    command = [git, "config", "--show-scope", "--includes", "-z", "--get-regexp", pattern]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=lookup_env,
            capture_output=True,
            timeout=_LOOKUP_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        return GitConfigView()
    except (OSError, subprocess.SubprocessError):
        return _UNKNOWN
    if done.returncode == 1:  # none of the keys is set anywhere
        return GitConfigView()
    if done.returncode != 0:
        return _UNKNOWN
    return parse_scoped_listing(done.stdout)


def program_outside(name: str, workspace: Path, search_path: str) -> str | None:
    """Where `name` is on the search path, looking only in absolute folders outside the workspace: paicli
    runs it itself, outside any sandbox, so a program a command left in the workspace (an activated
    `.venv/bin`, a `.` on PATH) must never be the one it finds."""
    root = os.path.realpath(workspace)
    folders = [
        entry
        for entry in search_path.split(os.pathsep)
        if os.path.isabs(entry) and not Path(os.path.realpath(entry)).is_relative_to(root)
    ]
    return shutil.which(name, path=os.pathsep.join(folders)) if folders else None


def _first_free_index(env: Mapping[str, str]) -> int:
    try:
        return max(int(env.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        return 0


def parse_scoped_listing(output: bytes) -> GitConfigView:
    """`git config --show-scope -z --get-regexp` output: `scope NUL key [LF value] NUL` per entry."""
    trusted: dict[str, list[str]] = {}
    from_repository: set[str] = set()
    fields = output.split(b"\0")
    for raw_scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        key_bytes, newline, value = entry.partition(b"\n")
        if not newline:
            value = b"true"  # `[core] fsmonitor` without `= ...` is a boolean true
        key = key_bytes.decode(errors="replace").lower()
        if raw_scope.decode(errors="replace") not in _TRUSTED_SCOPES:
            from_repository.add(key)
            continue
        with contextlib.suppress(UnicodeDecodeError):
            trusted.setdefault(key, []).append(value.decode())
    return GitConfigView(trusted, frozenset(from_repository))
