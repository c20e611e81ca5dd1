"""Which sandbox a session uses, decided once at start-up from the `sandbox` setting:

- `auto` (the default): bubblewrap when it is installed and works, probed with a tiny command under the
  real options; otherwise no sandbox, with one notice saying how to install it or, when it is installed
  but refused (Ubuntu 24.04's AppArmor restriction on unprivileged user namespaces, a sysctl), what to
  change;
- `bwrap`: bubblewrap or a clear error (ConfigError, exit 2);
- `off`: commands run as the user, uncontained.

A probe runs once per process for the same options (its answer is kept).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from paicli.common.errors import ConfigError
from paicli.sandbox.bwrap import BwrapSandbox
from paicli.sandbox.containment import Containment, Sandbox
from paicli.sandbox.memos import FolderMemos
from paicli.sandbox.secret_files import SHELL_FILES, env_files, files_holding

SandboxMode = Literal["auto", "bwrap", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "off")
PROBE_TIMEOUT = 10.0
PATIENCE = 4  # a probe that timed out is given this many times as long once more
INSTALL_HINT = "install bubblewrap to contain them (Debian/Ubuntu: sudo apt install bubblewrap)"


@dataclass(frozen=True)
class SandboxChoice:
    mode: SandboxMode
    sandbox: Sandbox | None
    problem: str | None = None  # why bubblewrap is not used in `auto` (None: it is, or the mode is off)
    # the session's folder listings (memos.py), the sandbox's own when there is one
    memos: FolderMemos = field(default_factory=FolderMemos, compare=False, repr=False)

    @property
    def notice(self) -> str | None:
        """The one start-up notice of `auto` falling back to no sandbox."""
        return f"commands run without a sandbox: {self.problem}" if self.problem else None

    def describe(self) -> str:
        """One line for the banner, `/approval` and doctor: are commands contained?"""
        if self.sandbox is not None:
            return f"commands are contained ({self.sandbox.describe()})"
        if self.mode == "off":
            return "commands are not contained (sandbox = off): approvals are the only guard"
        return f"commands are not contained: {self.problem or 'no sandbox'}"


def choose_sandbox(
    mode: SandboxMode,
    *,
    workspace: Path,
    home: Path,
    network: bool = False,
    writable: Sequence[str] = (),
    hide: Sequence[str] = (),
    search_path: str | None = None,
    secrets: Sequence[str] = (),
) -> SandboxChoice:
    """The sandbox of a session; ConfigError when `bwrap` is asked for and cannot run. `secrets`: values
    (the key) whose files outside the workspace are hidden too (paicli/sandbox/secret_files.py)."""
    memos = FolderMemos()
    if mode == "off":
        return SandboxChoice(mode, None, memos=memos)
    hide = [*hide, *secret_paths(workspace, home, secrets)]
    program = _find_bwrap(workspace, os.environ.get("PATH", os.defpath) if search_path is None else search_path)
    if program is None:
        return _unavailable(mode, f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}", memos)
    sandbox = BwrapSandbox(os.path.realpath(program), home, network, tuple(writable), tuple(hide), memos=memos)
    failure = probe(sandbox, workspace)
    if failure is not None and "--size" in failure:  # an old bwrap without --size: caps left out
        sandbox = BwrapSandbox(sandbox.program, home, network, tuple(writable), tuple(hide), False, memos)
        failure = probe(sandbox, workspace)
    if failure is not None:
        return _unavailable(mode, diagnose(failure), memos)
    return SandboxChoice(mode, sandbox, memos=memos)


def secret_paths(workspace: Path, home: Path, secrets: Sequence[str]) -> list[str]:
    """Shell start-up files and histories, `.env`/`.envrc` above the workspace, and files holding a secret."""
    found = [*env_files(workspace, home), *files_holding(secrets, workspace, home)]
    return list(dict.fromkeys([*SHELL_FILES, *map(str, found)]))


def _find_bwrap(workspace: Path, search_path: str) -> str | None:
    """bwrap on the search path, never from a relative folder or one inside the workspace: a program a
    command left there (an activated `.venv/bin`) would otherwise be the "sandbox" of the next session."""
    root = Path(os.path.realpath(workspace))
    folders = [
        entry
        for entry in search_path.split(os.pathsep)
        if os.path.isabs(entry) and not Path(os.path.realpath(entry)).is_relative_to(root)
    ]
    return shutil.which("bwrap", path=os.pathsep.join(folders)) if folders else None


def _unavailable(mode: SandboxMode, problem: str, memos: FolderMemos) -> SandboxChoice:
    if mode == "bwrap":
        raise ConfigError(f"--sandbox bwrap: {problem}")
    return SandboxChoice(mode, None, problem, memos)


def probe(sandbox: BwrapSandbox, workspace: Path) -> str | None:
    """None when `true` runs under the sandbox's real options in this workspace; else bwrap's complaint."""
    containment = Containment(Path(os.path.realpath(workspace)))
    argv, _ = sandbox.command(["true"], {}, containment)
    problem = _patient_probe(tuple(argv))
    if problem is not None:
        # a socket it covers may have gone (with its folder) between the scan and bwrap, which then cannot
        # make the mount point: the options built again leave it out
        again, _ = sandbox.command(["true"], {}, containment)
        if again != argv:
            problem = _patient_probe(tuple(again))
    return problem


def _patient_probe(argv: tuple[str, ...]) -> str | None:
    problem = _run_probe(argv, PROBE_TIMEOUT)
    if problem == _too_slow(PROBE_TIMEOUT):  # a machine under load is not a broken bwrap: wait longer once
        problem = _run_probe(argv, PROBE_TIMEOUT * PATIENCE)
    return problem


def _too_slow(timeout: float) -> str:
    return f"bwrap did not finish a trivial command in {timeout:g} s"


@functools.lru_cache(maxsize=16)
def _run_probe(argv: tuple[str, ...], timeout: float) -> str | None:
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env={"PATH": os.defpath},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _too_slow(timeout)
    except OSError as error:
        return f"bwrap could not start: {error.strerror or error}"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return lines[-1][:300] if lines else f"bwrap exited with {done.returncode} and said nothing"


def read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def diagnose(failure: str, sysctl: Callable[[str], str | None] = read_sysctl) -> str:
    """What to change when bubblewrap is installed but refused."""
    said = f"bwrap is installed but failed ({failure})"
    if sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return (
            f"{said}: AppArmor restricts unprivileged user namespaces (Ubuntu 24.04 and later); allow "
            "bwrap with an AppArmor profile (see docs/security.md, The sandbox) or set the sysctl "
            "kernel.apparmor_restrict_unprivileged_userns=0"
        )
    if sysctl("kernel.unprivileged_userns_clone") == "0":
        return f"{said}: unprivileged user namespaces are off; set the sysctl kernel.unprivileged_userns_clone=1"
    if sysctl("user.max_user_namespaces") == "0":
        return f"{said}: user namespaces are off; set the sysctl user.max_user_namespaces to a positive number"
    return said
