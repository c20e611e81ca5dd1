"""A contained command whose sandbox bubblewrap failed to set up (a socket's folder removed between the
scan and bwrap's start) is started once more with fresh options; one that ran is never run again, whatever
it printed (paicli/sandbox/launch.py). Real bwrap, real folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.sandbox import BwrapSandbox, Containment
from paicli.sandbox.choose import probe
from paicli.sandbox.launch import never_ran, start
from tests.sandboxing import FolderGoes, dead_socket

COMPLAINT = "bwrap: Can't mkdir parents for /var/tmp/x/s: Read-only file system"


def test_the_status_descriptor_is_closed_inside_the_sandbox(workspace: Path, sandbox: BwrapSandbox) -> None:
    with start(["bash", "-c", "true"], {"PATH": "/usr/bin:/bin"}, sandbox, Containment(workspace)) as launch:
        (fd,) = launch.pass_fds
        launch.argv[-1] = f"[ -e /proc/self/fd/{fd} ] && echo open || echo closed; echo x >&{fd}"
        done = subprocess.run(launch.argv, env=launch.env, pass_fds=launch.pass_fds, capture_output=True, text=True)
        assert done.stdout == "closed\n" and "Bad file descriptor" in done.stderr and done.returncode == 1
        assert not launch.setup_failed(done.returncode)


def test_the_probe_survives_the_race(workspace: Path, fake_home: Path, sandbox: BwrapSandbox) -> None:
    folder = fake_home / ".daemon" / "run"
    dead_socket(folder)
    racing = FolderGoes.of(sandbox, folder, "after the first build")
    assert probe(racing, workspace) is None and len(racing.builds) == 2


def test_without_a_sandbox_nothing_is_watched(workspace: Path) -> None:
    with start(["true"], {}, None, Containment(workspace)) as launch:
        assert launch.argv == ["true"] and launch.pass_fds == () and not launch.setup_failed(1)
        assert launch.again() is None


CHILD = b'{ "child-pid": 7610, "mnt-namespace": 4026532179 }\n'


@pytest.mark.parametrize(
    ("returncode", "status", "expected"),
    [
        (1, CHILD, True),  # bwrap failed in its setup
        (1, b"", True),  # bwrap failed before it made the sandbox
        (1, CHILD + b'{ "exit-code": 1 }\n', False),  # the command ran and failed
        (0, CHILD + b'{ "exit-code": 0 }\n', False),
        (-9, CHILD, False),  # killed (a time-out, ESC): it may have run
        (None, CHILD, False),  # stopped
        (1, CHILD + b"{ not json\n", False),  # not bwrap's own: counts as ran
        (1, CHILD + b"[1]\n", False),
    ],
)
def test_what_counts_as_never_ran(returncode: int | None, status: bytes, expected: bool) -> None:
    assert never_ran(returncode, status) is expected
