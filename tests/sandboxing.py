"""Real bubblewrap for tests: a working sandbox, or a skip that says why (a failure under
PAICLI_REQUIRE_SANDBOX=1, which .ci/run sets), and what tests need to prove containment: finding a
process by a unique argument, a one-shot HTTP server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import functools
import http.server
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from paicli.sandbox import BwrapSandbox, Containment, choose_sandbox

REQUIRED = os.environ.get("PAICLI_REQUIRE_SANDBOX") == "1"


def bwrap_sandbox(
    workspace: Path, home: Path, *, network: bool = False, writable: tuple[str, ...] = (), hide: tuple[str, ...] = ()
) -> BwrapSandbox:
    """A bubblewrap sandbox that works here (probed), or the test is skipped (failed when required)."""
    choice = choose_sandbox("auto", workspace=workspace, home=home, network=network, writable=writable, hide=hide)
    if not isinstance(choice.sandbox, BwrapSandbox):
        if REQUIRED:
            pytest.fail(f"PAICLI_REQUIRE_SANDBOX=1 but {choice.problem}")
        pytest.skip(f"no working bubblewrap here: {choice.problem}")
    return choice.sandbox


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot contain commands on this machine (None: it can), probed once per test process
    in an empty folder of its own under the temp folder (where the tests' workspaces are). Not in /tmp
    itself: the probe runs under the real options, which bind every git directory in the workspace
    read-only (gitdirs.py), and in the middle of the suite /tmp holds every test's repositories: a walk of
    all of /tmp and hundreds of mounts, which bwrap sets up in time quadratic in their number (it reads
    the mount table after each), so under the suite's load the probe took over PROBE_TIMEOUT and was
    waited for again PATIENCE times as long (paicli/sandbox/choose.py): up to a minute in the first
    test of each worker that asked."""
    folder = tempfile.mkdtemp(prefix="paicli-bwrap-probe-")
    try:
        return choose_sandbox("auto", workspace=Path(os.path.realpath(folder)), home=Path.home()).problem
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def require_bwrap() -> None:
    """For tests that run paicli itself with the default `--sandbox auto`."""
    problem = bwrap_problem()
    if problem is not None:
        if REQUIRED:
            pytest.fail(f"PAICLI_REQUIRE_SANDBOX=1 but {problem}")
        pytest.skip(f"no working bubblewrap here: {problem}")


def dead_socket(folder: Path) -> Path:
    """A socket file (nobody listening) in `folder`, made with its parents: the sandbox covers it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "d.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
    return path


When = Literal["after the first build", "before the second build"]


def fields_of(sandbox: BwrapSandbox) -> dict[str, object]:
    """The sandbox's own settings, for a test sandbox made like it."""
    return {field.name: getattr(sandbox, field.name) for field in dataclasses.fields(sandbox)}


@dataclass(frozen=True)
class FolderGoes(BwrapSandbox):
    """A real bubblewrap sandbox that removes the folder `gone` (a daemon's, holding its socket) `when`:
    just after it built a command's options the first time (so bwrap finds the socket's folder gone as it
    sets up the sandbox: the race), or just before it builds them a second time."""

    gone: Path = Path("/nonexistent")
    when: When = "after the first build"
    builds: list[int] = dataclasses.field(default_factory=list, compare=False)  # one entry per build

    @classmethod
    def of(cls, sandbox: BwrapSandbox, gone: Path, when: When = "after the first build") -> FolderGoes:
        return cls(**fields_of(sandbox), gone=gone, when=when)

    def command(
        self, argv: Sequence[str], env: Mapping[str, str], containment: Containment
    ) -> tuple[list[str], dict[str, str]]:
        self.builds.append(1)
        if self.when == "before the second build" and len(self.builds) == 2:
            shutil.rmtree(self.gone)
        built = super().command(argv, env, containment)
        if self.when == "after the first build" and len(self.builds) == 1:
            shutil.rmtree(self.gone)
        return built


@dataclass(frozen=True)
class MissingMountPoint(BwrapSandbox):
    """A real bubblewrap sandbox whose options also bind /dev/null on a path in a folder that does not
    exist in a read-only place: bwrap fails in its setup every time. `moving`: a new such path each build
    (the options built again differ), else the same one."""

    missing: Path = Path("/nonexistent")
    moving: bool = False
    builds: list[int] = dataclasses.field(default_factory=list, compare=False)

    @classmethod
    def of(cls, sandbox: BwrapSandbox, missing: Path, *, moving: bool = False) -> MissingMountPoint:
        return cls(**fields_of(sandbox), missing=missing, moving=moving)

    def command(
        self, argv: Sequence[str], env: Mapping[str, str], containment: Containment
    ) -> tuple[list[str], dict[str, str]]:
        self.builds.append(1)
        built, environment = super().command(argv, env, containment)
        target = self.missing / (f"build{len(self.builds)}" if self.moving else "same") / "x"
        end = built.index("--")
        return [*built[:end], "--ro-bind", "/dev/null", str(target), *built[end:]], environment


def marker() -> str:
    """A unique `sleep` duration, so a process can be found by its command line: `sleep 300.123456`."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


def gone_soon(argument: str, within: float = 3.0) -> bool:
    """Whether every process with `argument` is gone within `within` seconds. For a command killed on a
    timeout or a cancel: its group is killed at once, but the processes of its PID namespace die as the
    kernel tears it down, a moment after bwrap itself (which the tool waits for) is gone."""
    deadline = time.monotonic() + within
    while processes_with(argument):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def processes_with(argument: str) -> list[int]:
    """Host pids whose command line holds `argument` as one of its words."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if argument.encode() in words and state != "Z":
            found.append(int(entry))
    return found


@contextmanager
def http_server(body: bytes = b"ok\n") -> Iterator[tuple[int, list[str]]]:
    """A server on 127.0.0.1 answering every GET with `body`; yields (port, paths requested)."""
    requested: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], requested
    finally:
        server.shutdown()
        server.server_close()
