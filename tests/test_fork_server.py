"""The suite's fork server (tests/forkserver.py) gives what a real spawn of `python -m paicli` gives: the same
exit code, output and requests, the key handed over, a time limit that ends the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import TEST_KEY, fork_server, paicli_env, paicli_pty, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, REPO, pty_env


def comparable(events: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(e["event"], e.get("name"), e.get("content"), e.get("ok")) for e in events]


def test_a_forked_run_is_a_spawned_run(fake: FakeLLM, workspace: Path, home: Path) -> None:
    if fork_server() is None:
        pytest.skip("PAICLI_TEST_SPAWN=1: every run is a spawn")
    (workspace / "notes.txt").write_text("forty-two\n")
    fake.on("forty-two", Reply.text("It says forty-two."), repeat=True)
    fake.on("read the notes", Reply.tool_calls([("read_file", {"path": "notes.txt"})]), repeat=True)
    args = ["-C", str(workspace), "run", "read the notes", "--json"]
    forked = run_paicli(args, paicli_env(fake, home))
    spawned = run_paicli(args, paicli_env(fake, home), spawn=True)
    assert forked.code == spawned.code == 0, forked.stderr + spawned.stderr
    assert comparable(forked.events()) == comparable(spawned.events())
    assert forked.events()[-1]["content"] == "It says forty-two."
    assert [r.headers.get("authorization") for r in fake.requests] == [f"Bearer {TEST_KEY}"] * 4
    usage = run_paicli(["--no-such-flag"], paicli_env(fake, home))
    assert usage.code == run_paicli(["--no-such-flag"], paicli_env(fake, home), spawn=True).code == 2


def test_a_forked_run_past_its_time_limit_is_killed(fake: FakeLLM, workspace: Path, home: Path) -> None:
    server = fork_server()
    if server is None:
        pytest.skip("PAICLI_TEST_SPAWN=1: every run is a spawn")
    fake.on("wait", Reply.text("late", latency=30))
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(["-C", str(workspace), "run", "wait"], paicli_env(fake, home), timeout=2)
    assert server.last_pid is not None
    deadline = time.monotonic() + 10
    while Path(f"/proc/{server.last_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # killed at once; its supervisor reaps it
    assert not Path(f"/proc/{server.last_pid}").exists()


def test_a_forked_run_is_held_to_its_memory_limit(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("hello", Reply.text("Hi."), repeat=True)
    args = ["-C", str(workspace), "run", "hello"]
    assert run_paicli(args, paicli_env(fake, home), memory_limit=1 << 30).code == 0
    starved = run_paicli(args, paicli_env(fake, home), memory_limit=16 << 20)  # less than paicli holds already
    assert starved.code != 0 and "Traceback" in starved.stderr  # MemoryError, or a library that cannot map


def test_a_forked_repl_has_the_terminal_a_spawned_one_has(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """Its own session led by it, the pty its controlling terminal, its size; Ctrl+D ends it with 0."""
    env = pty_env(fake, home)
    for spawn in (False, True):
        options: dict[str, Any] = {"cwd": str(REPO), "env": env, "encoding": "utf-8", "dimensions": (33, 91)}
        args = ["-C", str(workspace)]
        child = (
            pexpect.spawn(sys.executable, ["-m", "paicli", *args], **options) if spawn else paicli_pty(args, **options)
        )
        try:
            child.expect_exact(PROMPT, timeout=20)
            fields = Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()
            session, tty_nr = int(fields[3]), int(fields[4])
            assert session == child.pid and tty_nr != 0, (spawn, fields)
            assert os.ttyname(child.child_fd) and child.getwinsize() == (33, 91)
            child.sendcontrol("d")
            child.expect(pexpect.EOF, timeout=20)
            child.close()
            assert child.exitstatus == 0, (spawn, child.exitstatus, child.signalstatus)
        finally:
            if child.isalive():
                child.terminate(force=True)


def test_a_suite_started_as_a_background_job_still_lets_its_children_be_interrupted() -> None:
    """A shell starts a background job with SIGINT and SIGQUIT ignored, and children inherit that: the
    tests' conftest gives the processes they start the usual disposition back (tests/conftest.py)."""

    def ignore_interrupts() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGQUIT, signal.SIG_IGN)

    probe = "import signal as s; print([s.getsignal(n) == s.SIG_IGN for n in (s.SIGINT, s.SIGQUIT)])"
    root = Path(__file__).resolve().parents[1]
    for prelude, expected in (("import tests.conftest", "[False, False]"), ("pass", "[True, True]")):
        code = f"import subprocess, sys\n{prelude}\nsubprocess.run([sys.executable, '-c', {probe!r}])"
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, preexec_fn=ignore_interrupts
        )
        assert expected in done.stdout, (expected, done.stdout, done.stderr[-2000:])
