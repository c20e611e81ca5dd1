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
from paicli.tools.base import ToolContext
from paicli.tools.builtin.execute_command import run_in_group
from paicli.tools.output import HeadTailBuffer
from tests.sandboxing import FolderGoes, MissingMountPoint, When, dead_socket

COMPLAINT = "bwrap: Can't mkdir parents for /var/tmp/x/s: Read-only file system"


async def run(sandbox: BwrapSandbox, workspace: Path, command: str) -> tuple[int | None, str, str]:
    """Exit code, the output kept (what the model is given) and the output streamed (the live display)."""
    streamed: list[str] = []
    ctx = ToolContext(workspace, sandbox=sandbox, command_timeout=30, on_output=streamed.append)
    buffer = HeadTailBuffer(head_bytes=20_000, tail_bytes=20_000)
    code, timed_out = await run_in_group(command, ctx, buffer, 30)
    assert not timed_out
    return code, buffer.render(20_000), "".join(streamed)


def daemon_folder_goes(sandbox: BwrapSandbox, fake_home: Path, when: When) -> FolderGoes:
    """The sandbox with a daemon's socket in the home folder, whose folder goes `when`."""
    folder = fake_home / ".daemon" / "run"
    dead_socket(folder)
    return FolderGoes.of(sandbox, folder, when)


async def test_a_socket_folder_gone_before_bwrap_starts_costs_one_more_start_not_the_command(
    workspace: Path, fake_home: Path, sandbox: BwrapSandbox
) -> None:
    racing = daemon_folder_goes(sandbox, fake_home, "after the first build")
    code, output, _ = await run(racing, workspace, "echo ran >> counter; echo done")
    assert (code, output) == (0, "done\n")
    assert (workspace / "counter").read_text() == "ran\n" and len(racing.builds) == 2


async def test_a_command_that_prints_bwraps_complaint_itself_is_not_run_again(
    workspace: Path, fake_home: Path, sandbox: BwrapSandbox
) -> None:
    """Options built again would differ (the socket's folder is gone by then), yet the command ran."""
    racing = daemon_folder_goes(sandbox, fake_home, "before the second build")
    code, output, _ = await run(racing, workspace, f'echo ran >> counter; echo "{COMPLAINT}" >&2; exit 1')
    assert (code, output) == (1, COMPLAINT + "\n")
    assert (workspace / "counter").read_text() == "ran\n" and len(racing.builds) == 1


async def test_a_command_cannot_forge_the_status_to_be_run_twice(
    workspace: Path, fake_home: Path, sandbox: BwrapSandbox
) -> None:
    """It writes bwrap's first status line to every descriptor it has, then fails as a setup would."""
    racing = daemon_folder_goes(sandbox, fake_home, "before the second build")
    forge = '{ "child-pid": 2 }'
    command = (
        "echo ran >> counter; for n in $(seq 3 1023); do { printf '%s\\n' '" + forge + "' >&$n; } 2>/dev/null; done; "
        f'echo "{COMPLAINT}" >&2; exit 1'
    )
    code, _, _ = await run(racing, workspace, command)
    assert code == 1 and (workspace / "counter").read_text() == "ran\n" and len(racing.builds) == 1


def test_the_status_descriptor_is_closed_inside_the_sandbox(workspace: Path, sandbox: BwrapSandbox) -> None:
    with start(["bash", "-c", "true"], {"PATH": "/usr/bin:/bin"}, sandbox, Containment(workspace)) as launch:
        (fd,) = launch.pass_fds
        launch.argv[-1] = f"[ -e /proc/self/fd/{fd} ] && echo open || echo closed; echo x >&{fd}"
        done = subprocess.run(launch.argv, env=launch.env, pass_fds=launch.pass_fds, capture_output=True, text=True)
        assert done.stdout == "closed\n" and "Bad file descriptor" in done.stderr and done.returncode == 1
        assert not launch.setup_failed(done.returncode)


async def test_a_setup_failure_that_stays_is_reported_once_with_bwraps_message(
    workspace: Path, fake_home: Path, sandbox: BwrapSandbox
) -> None:
    """The options built again are the same: no second start."""
    broken = MissingMountPoint.of(sandbox, fake_home / "missing")
    code, output, streamed = await run(broken, workspace, "echo ran >> counter")
    assert code == 1 and not (workspace / "counter").exists() and len(broken.builds) == 2
    assert output.count("bwrap: Can't mkdir parents for") == 1 and f"{fake_home}/missing/same/x" in output
    assert streamed == output


async def test_a_setup_failure_is_retried_only_once(workspace: Path, fake_home: Path, sandbox: BwrapSandbox) -> None:
    """Options that differ each time and fail each time: two starts, the second one's complaint kept."""
    broken = MissingMountPoint.of(sandbox, fake_home / "missing", moving=True)
    code, output, streamed = await run(broken, workspace, "echo ran >> counter")
    assert code == 1 and not (workspace / "counter").exists() and len(broken.builds) == 2
    assert output.count("bwrap: ") == 1 and "missing/build2/x" in output
    assert "missing/build1/x" in streamed  # already on the display when the second start was made


def test_the_probe_survives_the_race(workspace: Path, fake_home: Path, sandbox: BwrapSandbox) -> None:
    racing = daemon_folder_goes(sandbox, fake_home, "after the first build")
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
