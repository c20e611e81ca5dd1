"""Shared fixtures: a temp workspace, a temp HOME with fast retries, and running paicli for real."""

from __future__ import annotations

import atexit
import functools
import json
import os
import resource
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest

from paicli.secret_handoff import is_secret_name
from tests.fakellm import FakeLLM
from tests.forkserver import ForkedSpawn, ForkServer


def _share_a_bytecode_cache() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (CI sets it, to keep the checkout clean), every paicli the tests
    start and every xdist worker compiled some 300 modules from source again: minutes of the suite. They
    share one bytecode cache outside the tree instead. Runs at import, before the workers start."""
    if not os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        return
    default = Path(tempfile.gettempdir()) / f"paicli-tests-pycache-{os.getuid()}"
    prefix = os.environ.setdefault("PYTHONPYCACHEPREFIX", str(default))
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_share_a_bytecode_cache()


def _take_interrupts_again() -> None:
    """A suite started as a background job of a shell (`pytest &`, a script's `cmd &`) ignores SIGINT and
    SIGQUIT, as POSIX says such jobs do, and every process it starts inherits that: a spawned paicli or a
    writer the tests interrupt with SIGINT then never stops (the tests waited 30 to 60 s and failed: seen
    as flakes under load). The processes the tests start get the usual disposition, as from a terminal."""
    for number in (signal.SIGINT, signal.SIGQUIT):
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)


_take_interrupts_again()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts two workers a core, not one: most tests wait (on a pseudo-terminal's screen, a
    spawned paicli, the fake server's paced replies), so a core has room for a second worker. Measured on
    2 cores, tests/ui/commands twice each way: 150 and 177 s with 2 workers, 103 and 112 s with 4, the
    same CPU time."""
    return 2 * (os.cpu_count() or 1)


TEST_KEY = "sk-test-4f9a2b7c1d"


@pytest.fixture(autouse=True)
def own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process code that finds HOME (the audit log, remembered server capabilities) writes below a
    temp folder, never into the real ~/.paicli of whoever runs the tests."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("default-home")))


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)
    (folder / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = false\n")
    return folder


def paicli_env(fake: FakeLLM, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
    env.update(HOME=str(home), PAICLI_API_KEY=TEST_KEY, PAICLI_BASE_URL=fake.base_url, PAICLI_MODEL="fake-model")
    env.update(extra)
    return env


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == kind]


def _limit_memory(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


_FORK_SERVER: list[ForkServer] = []


def fork_server() -> ForkServer | None:
    """This worker's fork server, started on first use (None when runs are real spawns)."""
    if os.environ.get("PAICLI_TEST_SPAWN") == "1":
        return None
    if not _FORK_SERVER:
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("PAICLI_", "OPENAI_")) and not is_secret_name(name)
        }
        folder = Path(tempfile.mkdtemp(prefix="paicli-fork-"))
        _FORK_SERVER.append(ForkServer(folder, env, Path(__file__).resolve().parent.parent))
        atexit.register(_FORK_SERVER[0].close)
    return _FORK_SERVER[0]


def paicli_pty(args: list[str], **options: Any) -> pexpect.spawn:
    """pexpect.spawn of `python -m paicli ARGS` (`options`: pexpect's), forked by the fork server
    (PAICLI_TEST_SPAWN=1: spawned)."""
    server = fork_server()
    if server is None:
        return pexpect.spawn(sys.executable, ["-m", "paicli", *args], **options)
    return ForkedSpawn(server, sys.executable, ["-m", "paicli", *args], **options)


def start_paicli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """paicli running in the background (to be signalled), its output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "paicli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def run_paicli(
    args: list[str], env: dict[str, str], *, timeout: float = 60, spawn: bool = False, memory_limit: int | None = None
) -> Finished:
    """`python -m paicli ARGS` to its end, as a fork of a process that has paicli imported (tests/forkserver.py);
    `spawn` (or PAICLI_TEST_SPAWN=1): a real spawn, for what happens before paicli's first import and what
    /proc shows of its process."""
    server = None if spawn else fork_server()
    if server is not None:
        done = server.run(args, env, timeout, memory_limit=memory_limit)
        return Finished(done.returncode, done.stdout, done.stderr)
    proc = subprocess.run(
        [sys.executable, "-m", "paicli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=None if memory_limit is None else functools.partial(_limit_memory, memory_limit),
    )
    return Finished(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made with the openssl command)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed: no certificate to serve")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture
def tls_fake(certificate: tuple[Path, Path]) -> Iterator[FakeLLM]:
    """The fake model server speaking HTTPS with `certificate`, which nothing trusts unless told."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*map(str, certificate))
    with FakeLLM(tls=context) as fake:
        yield fake


def unexpected_warning(message: str) -> None:
    """The `warn` of a configuration load that should have nothing to warn about."""
    raise AssertionError(f"unexpected warning: {message}")
