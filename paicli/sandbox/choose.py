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

import dataclasses
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from paicli.common.errors import ConfigError
from paicli.sandbox.bwrap import BwrapSandbox
from paicli.sandbox.containment import Containment, Sandbox
from paicli.sandbox.launch import Launch, start
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
    if failure is not None and "--json-status-fd" in failure:  # older than 0.3.2: a failed setup not retried
        sandbox = dataclasses.replace(sandbox, statuses=False)
        failure = probe(sandbox, workspace)
    if failure is not None and "--size" in failure:  # an old bwrap without --size: caps left out
        sandbox = dataclasses.replace(sandbox, sizes=False)
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
    """None when `true` runs under the sandbox's real options in this workspace; else bwrap's complaint.
    When bwrap failed in its setup, once more with the options built again (launch.py): a socket they cover
    may have gone with its folder between the scan and bwrap, which then cannot make the mount point."""
    containment = Containment(Path(os.path.realpath(workspace)))
    with start(["true"], {}, sandbox, containment) as launch:
        problem, never_ran = _patient_probe(launch)
        again = launch.again() if never_ran else None
    if again is None:
        return problem
    with again:
        return _patient_probe(again).problem


class _Probed(NamedTuple):
    problem: str | None  # None: `true` ran and exited 0
    never_ran: bool  # bwrap failed in its setup (launch.py)


# The answers of this process's probes, by options, status pipe or not and time limit (the oldest forgotten
# beyond PROBES_KEPT).
_probed: dict[tuple[tuple[str, ...], bool, float], _Probed] = {}
PROBES_KEPT = 16


def _patient_probe(launch: Launch) -> _Probed:
    answer = _run_probe(launch, PROBE_TIMEOUT)
    if answer.problem == _too_slow(PROBE_TIMEOUT):  # a machine under load is not a broken bwrap: wait longer once
        answer = _run_probe(launch, PROBE_TIMEOUT * PATIENCE)
    return answer


def _too_slow(timeout: float) -> str:
    return f"bwrap did not finish a trivial command in {timeout:g} s"


def _run_probe(launch: Launch, timeout: float) -> _Probed:
    key = (tuple(launch.built), launch.watched, timeout)
    if (known := _probed.get(key)) is None:
        known = _probed[key] = _probe_once(launch, timeout)
        while len(_probed) > PROBES_KEPT:
            del _probed[next(iter(_probed))]
    return known


def _probe_once(launch: Launch, timeout: float) -> _Probed:
    try:
        done = subprocess.run(
            launch.argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env={"PATH": os.defpath},
            check=False,
            pass_fds=launch.pass_fds,
        )
    except subprocess.TimeoutExpired:
        return _Probed(_too_slow(timeout), False)
    except OSError as error:
        return _Probed(f"bwrap could not start: {error.strerror or error}", False)
    if done.returncode == 0:
        return _Probed(None, False)
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    problem = lines[-1][:300] if lines else f"bwrap exited with {done.returncode} and said nothing"
    return _Probed(problem, launch.setup_failed(done.returncode))


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
