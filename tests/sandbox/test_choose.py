"""Choosing the sandbox at start-up: bubblewrap when it works, otherwise (auto) no sandbox with a notice
that says what to do, and (bwrap) a clear error. Stand-in `bwrap` programs on PATH play the broken
cases; a real one the working case."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.sandbox import BwrapSandbox, Containment, choose, choose_sandbox
from paicli.sandbox.choose import diagnose
from tests import sandboxing
from tests.sandboxing import bwrap_sandbox


def stub_bwrap(folder: Path, script: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "bwrap"
    program.write_text("#!/bin/sh\n" + script)
    program.chmod(0o755)
    return str(folder)


def test_a_missing_bwrap_means_auto_runs_uncontained_with_an_install_hint(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=str(empty))
    assert choice.sandbox is None
    assert choice.notice is not None and "apt install bubblewrap" in choice.notice
    assert "not contained" in choice.describe()
    with pytest.raises(ConfigError, match=r"--sandbox bwrap: bubblewrap .* is not installed"):
        choose_sandbox("bwrap", workspace=workspace, home=tmp_path, search_path=str(empty))


def test_a_broken_bwrap_means_auto_falls_back_and_bwrap_mode_fails_clearly(workspace: Path, tmp_path: Path) -> None:
    path = stub_bwrap(tmp_path / "bin", "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=path)
    assert choice.sandbox is None and choice.notice is not None
    assert "bwrap is installed but failed (bwrap: setting up uid map: Permission denied)" in choice.notice
    with pytest.raises(ConfigError, match="uid map: Permission denied"):
        choose_sandbox("bwrap", workspace=workspace, home=tmp_path, search_path=path)


def test_off_never_probes(workspace: Path, tmp_path: Path) -> None:
    path = stub_bwrap(tmp_path / "bin", f"touch {tmp_path}/probed\nexit 1\n")
    choice = choose_sandbox("off", workspace=workspace, home=tmp_path, search_path=path)
    assert choice.sandbox is None and choice.notice is None and "sandbox = off" in choice.describe()
    assert not (tmp_path / "probed").exists()


def test_an_old_bwrap_without_size_is_used_without_the_caps(workspace: Path, tmp_path: Path) -> None:
    real = shutil.which("bwrap")
    if real is None:
        bwrap_sandbox(workspace, tmp_path)  # skips (or fails when required) with the reason
        return
    script = (
        'for arg in "$@"; do [ "$arg" = --size ] && { echo "bwrap: Unknown option --size" >&2; exit 1; }; done\n'
        f'exec {real} "$@"\n'
    )
    path = stub_bwrap(tmp_path / "old", script)
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=path)
    if choice.sandbox is None:  # the real one does not work here either
        bwrap_sandbox(workspace, tmp_path)
        return
    assert choice.notice is None and isinstance(choice.sandbox, BwrapSandbox) and not choice.sandbox.sizes
    assert "--size" not in choice.sandbox.options(Containment(workspace))


def test_an_old_bwrap_without_json_status_fd_is_used_without_the_retry(workspace: Path, tmp_path: Path) -> None:
    """bwrap older than 0.3.2 cannot tell a failed setup (paicli/sandbox/launch.py): it still contains."""
    real = bwrap_sandbox(workspace, tmp_path).program  # skips (or fails when required) without a working one
    script = (
        'for arg in "$@"; do [ "$arg" = --json-status-fd ] && '
        '{ echo "bwrap: Unknown option --json-status-fd" >&2; exit 1; }; done\n'
        f'exec {real} "$@"\n'
    )
    path = stub_bwrap(tmp_path / "old", script)
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=path)
    assert choice.notice is None and isinstance(choice.sandbox, BwrapSandbox), choice.problem
    assert not choice.sandbox.statuses and choice.sandbox.sizes
    assert choice.sandbox.with_status(["bwrap", "--", "true"], 5) is None


def test_what_to_change_when_user_namespaces_are_refused() -> None:
    apparmor = diagnose(
        "bwrap: setting up uid map: Permission denied", {"kernel.apparmor_restrict_unprivileged_userns": "1"}.get
    )
    assert "AppArmor" in apparmor and "kernel.apparmor_restrict_unprivileged_userns=0" in apparmor
    assert "unprivileged_userns_clone=1" in diagnose("x", {"kernel.unprivileged_userns_clone": "0"}.get)
    assert "max_user_namespaces" in diagnose("x", {"user.max_user_namespaces": "0"}.get)
    assert diagnose("bwrap: odd", {}.get) == "bwrap is installed but failed (bwrap: odd)"


def test_a_bwrap_inside_the_workspace_is_never_used(workspace: Path, tmp_path: Path) -> None:
    """A command may write the workspace: a `bwrap` it left in an in-repo folder on PATH would be the
    next session's sandbox, and would run outside it."""
    planted = stub_bwrap(workspace / ".venv" / "bin", f'touch {tmp_path}/pwned\nexec "$@"\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=f"{planted}:.:{empty}")
    assert choice.sandbox is None and "not installed" in (choice.notice or "")
    assert not (tmp_path / "pwned").exists()


def test_a_socket_gone_between_the_scan_and_the_probe_does_not_turn_the_sandbox_off(
    workspace: Path, tmp_path: Path
) -> None:
    """A socket covered with /dev/null whose folder is removed before bwrap starts (a test server, a build
    daemon stopping) made bwrap fail to make the mount point, and auto mode ran without a sandbox."""
    home = tmp_path / "home"
    folder = home / ".daemon" / "run"
    folder.mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "d.sock"))
    sock.close()
    script = (
        f'for arg in "$@"; do if [ "$arg" = {folder}/d.sock ]; then rm -rf {folder}; '
        f'echo "bwrap: Can\'t mkdir parents for {folder}/d.sock: Read-only file system" >&2; exit 1; fi; done\n'
        f"echo probed >> {tmp_path}/probes\n"
    )
    path = stub_bwrap(tmp_path / "bin", script)
    choice = choose_sandbox("auto", workspace=workspace, home=home, search_path=path)
    assert isinstance(choice.sandbox, BwrapSandbox), choice.problem
    assert not folder.exists() and (tmp_path / "probes").read_text() == "probed\n"


def test_a_slow_probe_on_a_loaded_machine_is_waited_for_once_more(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trivial bwrap run that took longer than the probe's bound once (a machine under heavy load) is
    given longer before auto mode gives up the sandbox; one that never ends is still a problem."""
    monkeypatch.setattr(choose, "PROBE_TIMEOUT", 0.5)
    slow_once = stub_bwrap(
        tmp_path / "once", f"[ -e {tmp_path}/tried ] && exit 0\ntouch {tmp_path}/tried\nexec sleep 5\n"
    )
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=slow_once)
    assert isinstance(choice.sandbox, BwrapSandbox), choice.problem
    hangs = stub_bwrap(tmp_path / "hangs", "exec sleep 10\n")
    choice = choose_sandbox("auto", workspace=workspace, home=tmp_path, search_path=hangs)
    assert choice.sandbox is None and choice.problem is not None
    assert "did not finish a trivial command in 2 s" in choice.problem


def test_the_suites_own_probe_runs_in_an_empty_folder_not_in_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/sandboxing.py's `require_bwrap` probes bubblewrap in an empty folder of its own: the probe binds
    every git directory of its workspace, and /tmp holds every test's repositories (thousands of mounts in
    the middle of the suite: over a minute under load, then a failed probe and skipped sandbox tests)."""
    seen: list[tuple[Path, list[str]]] = []

    def probe(mode: str, *, workspace: Path, home: Path) -> choose.SandboxChoice:
        seen.append((workspace, sorted(p.name for p in workspace.iterdir())))
        return choose.SandboxChoice("auto", None, "a stand-in probe")

    monkeypatch.setattr(sandboxing, "choose_sandbox", probe)
    assert sandboxing.bwrap_problem.__wrapped__() == "a stand-in probe"
    [(folder, listing)] = seen
    assert listing == [] and folder != Path(os.path.realpath("/tmp")) and not folder.exists()
