"""A fork server for the suite's paicli runs: most of a spawned paicli's cost (0.3-0.6 s of CPU) is
importing paicli, paid again by each of several hundred runs. The server, one per test worker, imports
paicli once; each run is a fork of it that becomes the command `python -m paicli ARGS` would start: its
own process with its stdin, stdout and stderr on the test's pipes (`run_paicli`) or a pseudo-terminal
that is its controlling terminal in a session of its own (`paicli_pty`, for pexpect), its environment,
working folder and arguments, and paicli's real entry point. What it skips is the interpreter's start,
the imports, and the re-exec that takes secrets out of the environment: the fork hands them over through
a pipe exactly as that re-exec does (paicli/secret_handoff.py), so paicli's own receiving side runs.

What a forked run cannot show (what paicli does before its first import, /proc/PID/environ) is tested with
real spawns: `run_paicli(spawn=True)` in the key red-team tests, `start_paicli` (signals), the few pty
tests that call pexpect themselves, tests/test_secret_handoff.py; PAICLI_TEST_SPAWN=1 makes every run a
real spawn (the suite passes both ways), and tests/test_fork_server.py compares the two.

Protocol (a Unix socket): the client sends 8 bytes (the header's length) with the run's three descriptors
(SCM_RIGHTS), then the JSON header {argv, env, cwd, memory_limit, tty}; the server answers a line with the
run's pid, then a line with its raw wait status.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import io
import json
import locale
import os
import pty
import random
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import traceback
from pathlib import Path
from typing import Any

import pexpect
import ptyprocess

# Imported by the server: every paicli module (a run imports what it needs of them lazily: the plan's
# executor, the reviewer...) and the libraries they load on first use; the forks then import nothing.
SKIPPED = ("paicli.__main__",)  # importing it runs paicli
LIBRARIES = ("httpcore2", "h11", "anyio", "re2", "pathspec", "ctypes", "mcp", "mcp.client.stdio")


def preload() -> None:
    import importlib
    import pkgutil

    import paicli

    for info in pkgutil.walk_packages(paicli.__path__, "paicli."):
        if info.name not in SKIPPED:
            with contextlib.suppress(ImportError):
                importlib.import_module(info.name)
    for name in LIBRARIES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def serve(path: str) -> None:
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the supervisors are reaped by the kernel
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)  # closed when the test worker goes: so do we
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                os._exit(0)
            connection, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                selector.close()
                _supervise(connection)
            connection.close()


def _supervise(connection: socket.socket) -> None:
    """In a child of the server: receive one run, fork it, report its pid and its exit code."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        raw, fds, _, _ = socket.recv_fds(connection, 8, 3)
        (length,) = struct.unpack("!Q", raw)
        body = b""
        while len(body) < length:
            chunk = connection.recv(length - len(body))
            if not chunk:
                os._exit(1)
            body += chunk
        header = json.loads(body)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _become_paicli(header, fds)
        for fd in fds:
            os.close(fd)
        connection.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        connection.sendall(f"{status}\n".encode())  # the raw wait status
    finally:
        os._exit(0)


def _become_paicli(header: dict[str, Any], fds: list[int]) -> None:
    code = 1
    try:
        if header.get("tty"):  # its own session, the terminal its controlling one, as a pty spawn has
            os.setsid()
            fcntl.ioctl(fds[0], termios.TIOCSCTTY, 0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if header.get("memory_limit"):  # as a spawn's preexec_fn would set it (RLIMIT_AS)
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (header["memory_limit"], header["memory_limit"]))
        os.chdir(header["cwd"])
        env: dict[str, str] = header["env"]
        from paicli.secret_handoff import HANDOFF_VARIABLE, handoff_environment, secrets_in

        # what restart_if_secrets does, without its execve
        if (secrets := secrets_in(env)) and HANDOFF_VARIABLE not in env:
            env = handoff_environment(secrets, env)
        os.environ.clear()
        os.environ.update(env)
        import paicli

        main_file = str(Path(paicli.__file__).with_name("__main__.py"))
        sys.argv = [main_file, *header["argv"]]
        sys.orig_argv = [sys.executable, "-m", "paicli", *header["argv"]]
        random.seed()  # a new process's own random state, not the server's
        import paicli.__main__ as main_module  # noqa: F401  (imports run entry(): never reached here)
    except SystemExit as done:
        code = _exit_code(done.code)
    except BaseException:
        traceback.print_exc()
    _end(code)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1


def _end(code: int) -> None:
    """The interpreter's exit: wait for non-daemon threads, run atexit, flush, end."""
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


class ForkServer:
    """The client: one server process per test worker, started on first use."""

    def __init__(self, folder: Path, env: dict[str, str], cwd: Path) -> None:
        self.path = str(folder / "paicli-fork.sock")
        self.last_pid: int | None = None
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from tests.forkserver import serve; serve({self.path!r})"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env=env,
            cwd=cwd,
            text=True,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if ready != "ready\n":
            raise RuntimeError(f"the paicli fork server did not start: {ready!r}")

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        timeout: float,
        stdin: bytes | None = None,
        memory_limit: int | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """What subprocess.run([python, -m, paicli, *args], capture_output, text, stdin=DEVNULL) gives;
        `memory_limit`: the run's address space (RLIMIT_AS), in bytes."""
        if stdin is None:  # as subprocess.DEVNULL: a character device, not an empty pipe
            in_read, in_write = os.open(os.devnull, os.O_RDONLY), None
        else:
            in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            connection = self.start(args, env, os.getcwd(), [in_read, out_write, err_write], memory_limit=memory_limit)
        finally:
            for fd in (in_read, out_write, err_write):
                os.close(fd)
        if in_write is not None:
            threading.Thread(target=_feed, args=(in_write, stdin or b""), daemon=True).start()
        replies = connection.makefile("r")
        pid = self.last_pid = int(replies.readline())
        out: list[bytes] = []
        err: list[bytes] = []
        readers = [
            threading.Thread(target=_drain, args=(out_read, out), daemon=True),
            threading.Thread(target=_drain, args=(err_read, err), daemon=True),
        ]
        for reader in readers:
            reader.start()
        connection.settimeout(timeout)
        try:
            code_line = replies.readline()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            for reader in readers:
                reader.join(5)
            raise subprocess.TimeoutExpired(
                [sys.executable, "-m", "paicli", *args], timeout, _text(out), _text(err)
            ) from None
        finally:
            connection.close()
        for reader in readers:
            reader.join()
        command = [sys.executable, "-m", "paicli", *args]
        code = os.waitstatus_to_exitcode(int(code_line))
        return subprocess.CompletedProcess(command, code, _text(out), _text(err))

    def start(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: str,
        fds: list[int],
        *,
        memory_limit: int | None = None,
        tty: bool = False,
    ) -> socket.socket:
        """Starts one run on `fds` (stdin, stdout, stderr; the caller closes its copies); the connection
        then gives its pid, then its wait status."""
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        header = json.dumps({"argv": args, "env": env, "cwd": cwd, "memory_limit": memory_limit, "tty": tty})
        try:
            connection.connect(self.path)
            data = header.encode()
            socket.send_fds(connection, [struct.pack("!Q", len(data))], fds)
            connection.sendall(data)
        except OSError:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        with contextlib.suppress(Exception):
            self.process.wait(5)


def _feed(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    os.close(fd)


def _drain(fd: int, into: list[bytes]) -> None:
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read1(1 << 16):
            into.append(chunk)


def _text(chunks: list[bytes]) -> str:
    """As subprocess's text mode decodes (the locale's encoding, universal newlines)."""
    data = b"".join(chunks).decode(locale.getpreferredencoding(False))
    return data.replace("\r\n", "\n").replace("\r", "\n")


class ForkedPty(ptyprocess.PtyProcess):  # type: ignore[misc]
    """A forked run on a pseudo-terminal, for pexpect: not this process's child, so its end comes from its
    supervisor (the wait status on the connection) instead of waitpid."""

    def __init__(self, pid: int, fd: int, connection: socket.socket, replies: io.TextIOWrapper) -> None:
        super().__init__(pid, fd)
        self.connection = connection
        self.replies = replies

    def isalive(self) -> bool:
        if self.terminated:
            return False
        # at the terminal's end of file the status is due: wait for it (as ptyprocess's blocking waitpid)
        ready, _, _ = select.select([self.connection], [], [], None if self.flag_eof else 0)
        if not ready:
            return True
        line = self.replies.readline()
        self.status = int(line) if line.strip() else 0
        if os.WIFSIGNALED(self.status):
            self.exitstatus, self.signalstatus = None, os.WTERMSIG(self.status)
        else:
            self.exitstatus, self.signalstatus = os.WEXITSTATUS(self.status), None
        self.terminated = True
        self.connection.close()
        return False

    def wait(self) -> int | None:
        while self.isalive():
            select.select([self.connection], [], [])
        return self.exitstatus  # type: ignore[no-any-return]


class ForkedSpawn(pexpect.spawn):  # type: ignore[misc]
    """pexpect.spawn of `python -m paicli ARGS` whose process is a fork of the fork server."""

    def __init__(self, server: ForkServer, *args: Any, **kwargs: Any) -> None:
        self.server = server
        super().__init__(*args, **kwargs)

    def _spawnpty(self, args: list[bytes | str], **kwargs: Any) -> ForkedPty:
        argv = [a.decode() if isinstance(a, bytes) else a for a in args]
        if argv[1:3] != ["-m", "paicli"]:
            raise ValueError(f"the fork server runs `python -m paicli ARGS` only, not {argv}")
        rows, columns = kwargs.get("dimensions") or (24, 80)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        try:
            connection = self.server.start(argv[3:], dict(kwargs["env"]), kwargs["cwd"], [slave] * 3, tty=True)
        finally:
            os.close(slave)
        replies = connection.makefile("r")
        return ForkedPty(int(replies.readline()), master, connection, replies)
