"""The `git` command against a shadow repository of one workspace, isolated from the user's git setup.

The repository lives outside the workspace (`GIT_DIR`) and reads the workspace as its work tree
(`GIT_WORK_TREE`), with an index of its own. Nothing of the user's git reaches it: every inherited
`GIT_*` variable is dropped, the system config is off (`GIT_CONFIG_NOSYSTEM`), the global config is
paicli's own file, the identity is fixed, hooks point nowhere, signing is off, and `info/attributes`
turns every content filter off so a stored file is byte for byte what is on disk. Only plumbing
commands are used (no hooks run, no pager, no automatic gc). Paths always go as literal pathspecs.

Calls are synchronous: the engine runs in a worker thread of its own (see service.py), never on the
event loop.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from paicli.tools.atomic import atomic_write

IDENTITY = {
    "GIT_AUTHOR_NAME": "paicli",
    "GIT_AUTHOR_EMAIL": "checkpoints@paicli.invalid",
    "GIT_COMMITTER_NAME": "paicli",
    "GIT_COMMITTER_EMAIL": "checkpoints@paicli.invalid",
}
# The shadow repository's own config: nothing that runs a program, signs, or rewrites content.
REPO_CONFIG = (
    ("core.bare", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.fileMode", "true"),
    ("core.quotePath", "false"),
    ("core.pager", "cat"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),
    ("diff.renames", "false"),
)
# Highest-priority attributes: no eol conversion, no filter, no ident, no re-encoding.
NO_FILTERS = "* -text -filter -ident -working-tree-encoding\n"
DAMAGE_SIGNS = (
    "not a git repository",
    "corrupt",
    "bad object",
    "unable to read",
    "invalid object",
    "bad signature",
    "index file smaller than expected",
    "unknown index entry format",
    "loose object",
    "bad tree object",
    "is not a valid",
    "fatal: bad config",
    "bad numeric config",
)
DISK_FULL_SIGNS = ("no space left on device", "disk quota exceeded", "file too large")


class GitError(Exception):
    """A git call that failed; the message is one line for the user."""

    def __init__(self, message: str, *, damaged: bool = False, disk_full: bool = False) -> None:
        super().__init__(message)
        self.damaged = damaged
        self.disk_full = disk_full


class ShadowGit:
    def __init__(self, git: str, git_dir: Path, work_tree: Path, global_config: Path) -> None:
        self.git = git
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.global_config = global_config
        self.index = git_dir / "paicli-index"
        self._env = self._environment(os.environ)

    def _environment(self, inherited: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in inherited.items() if not k.startswith("GIT_")}
        env.update(IDENTITY)
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_INDEX_FILE=str(self.index),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=str(self.global_config),
            GIT_ATTR_NOSYSTEM="1",
            GIT_LITERAL_PATHSPECS="1",
            GIT_NO_REPLACE_OBJECTS="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            GIT_PAGER="cat",
            LC_ALL="C",
        )
        return env

    def env(self, **extra: str) -> dict[str, str]:
        return {**self._env, **extra}

    def run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        stdin: int | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> bytes:
        """Runs `git ARGS` (its stdin `input`, or the open file `stdin`) and returns its stdout; GitError
        (one line) on any other exit code. Signals git would die of, such as SIGXFSZ at a file size
        limit, stay ignored as they are in paicli, so git reports the error instead."""
        try:
            done = subprocess.run(
                [self.git, *args],
                input=input,
                stdin=subprocess.DEVNULL if input is None and stdin is None else stdin,
                capture_output=True,
                restore_signals=False,
                start_new_session=True,  # a Ctrl-C at the terminal never kills a checkpoint half way
                env=dict(env) if env is not None else self._env,
                cwd=cwd or self.work_tree,
                check=False,
            )
        except OSError as error:
            raise GitError(f"cannot run git: {error.strerror or error}") from None
        if done.returncode not in ok_codes:
            raise describe_failure(args, done.returncode, done.stderr)
        return done.stdout

    def feed(self, args: Sequence[str], chunks: Iterable[bytes]) -> None:
        """Runs `git ARGS` with `chunks` streamed to its stdin (its output is not kept); GitError (one
        line) when it fails. For streams too big to hold at once."""
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    [self.git, *args],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env=self._env,
                    cwd=self.work_tree,
                    restore_signals=False,
                    start_new_session=True,
                )
            except OSError as error:
                raise GitError(f"cannot run git: {error.strerror or error}") from None
            assert process.stdin is not None
            try:
                for chunk in chunks:
                    process.stdin.write(chunk)
                process.stdin.close()
            except BrokenPipeError:
                pass  # git stopped reading: its exit code and message say why
            except BaseException:
                process.kill()
                process.wait()
                raise
            code = process.wait()
            if code != 0:
                errors.seek(0)
                raise describe_failure(args, code, errors.read(64 * 1024))

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file() and (self.git_dir / "objects").is_dir()

    def init(self) -> None:
        """Creates the repository and its isolating files (idempotent)."""
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        if not self.global_config.exists():
            self.global_config.write_text("# paicli's own git config for checkpoints: deliberately empty\n")
        env = {k: v for k, v in self._env.items() if k != "GIT_WORK_TREE"}
        self.run(["init", "--quiet", "--template=", str(self.git_dir)], env=env, cwd=self.git_dir.parent)
        self._write_config()
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(NO_FILTERS)

    def _write_config(self) -> None:
        """REPO_CONFIG merged into the config file `git init` wrote, in one write (a `git config` process
        per key cost 14 processes on a workspace's first checkpoint). Each key keeps one value: git refuses
        to set a key that has several (as `git init` does again on a repository started anew)."""
        path = self.git_dir / "config"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        sections: dict[str, dict[str, str]] = {}  # section → name (lower case) → "name = value"
        section = "core"
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1].strip()
            elif stripped and not stripped.startswith(("#", ";")):
                name, _, value = (part.strip() for part in stripped.partition("="))
                entry = f"{name} = {value}" if "=" in stripped else name  # a bare name is a true boolean
                sections.setdefault(section, {})[name.lower()] = entry
        for key, value in REPO_CONFIG:
            section, name = key.split(".", 1)
            sections.setdefault(section, {})[name.lower()] = f"{name} = {value}"
        lines = [
            f"[{name}]\n" + "".join(f"\t{entry}\n" for entry in entries.values()) for name, entries in sections.items()
        ]
        atomic_write(path, "".join(lines))

    def write_excludes(self, lines: Sequence[str]) -> None:
        """The shadow's `info/exclude`: paicli's own rules plus the user's `.git/info/exclude`."""
        path = self.git_dir / "info" / "exclude"
        text = "\n".join(lines) + "\n"
        try:
            if path.read_text(encoding="utf-8", errors="surrogateescape") == text:
                return
        except OSError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")


def describe_failure(args: Sequence[str], code: int, stderr: bytes) -> GitError:
    text = stderr.decode("utf-8", "replace").strip()
    lines = [line for line in text.splitlines() if line.strip()]
    detail = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "")
    lowered = text.lower()
    full = any(sign in lowered for sign in DISK_FULL_SIGNS)
    damaged = not full and any(sign in lowered for sign in DAMAGE_SIGNS)
    message = f"git {args[0] if args else ''} failed ({code}): {detail[:300] or 'no message'}"
    return GitError(message, damaged=damaged, disk_full=full)


def split_z(output: bytes) -> list[str]:
    """NUL-separated git output as paths (undecodable bytes kept as surrogates, as os.fsdecode does)."""
    return [os.fsdecode(part) for part in output.split(b"\0") if part]
