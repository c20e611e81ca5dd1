"""paicli/process_exit.py: the process ends without the interpreter's teardown, and loses nothing by it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


def run_python(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, **kwargs
    )  # type: ignore[call-overload, no-any-return]


def test_the_exit_code_and_buffered_output_survive_and_atexit_handlers_run(tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    done = run_python(
        f"""
        import atexit, sys
        from pathlib import Path
        from paicli.process_exit import leave
        atexit.register(lambda: Path({str(marker)!r}).write_text("yes"))
        sys.stdout.write("answer without a newline")
        sys.stderr.write("a note")
        leave(3)
        """
    )
    assert done.returncode == 3
    assert done.stdout == "answer without a newline"
    assert done.stderr == "a note"
    assert marker.read_text() == "yes"


def test_a_thread_still_working_is_waited_for_not_cut_off(tmp_path: Path) -> None:
    written = tmp_path / "written-by-the-thread"
    done = run_python(
        f"""
        import threading, time
        from pathlib import Path
        from paicli.process_exit import leave

        def work():
            time.sleep(0.3)
            Path({str(written)!r}).write_text("whole")

        threading.Thread(target=work).start()
        leave(0)
        """
    )
    assert done.returncode == 0, done.stderr
    assert written.read_text() == "whole"


def test_a_reader_that_went_away_does_not_change_the_exit_code() -> None:
    code = """
        import sys
        from paicli.process_exit import leave
        sys.stdout.write("x" * 1_000_000)
        leave(0)
        """
    with subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(10)
        process.stdout.close()  # `paicli … | head -c 10`
        errors = process.stderr.read()
        assert process.wait(timeout=60) == 0
    assert b"Traceback" not in errors


def test_python_m_paicli_ends_through_it_with_the_cli_exit_code_and_message(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}  # no API key anywhere
    done = subprocess.run(
        [sys.executable, "-m", "paicli", "run", "hi"], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path
    )
    assert done.returncode == 2
    assert "no API key" in done.stderr


def test_what_a_process_imports_before_its_secret_restart_stays_small() -> None:
    """A process started with an API key in its environment restarts at once (paicli/secret_handoff.py):
    what it imported before is thrown away, so the entry point keeps typing, contextlib and threading out
    (about 6 ms of every such start)."""
    code = (
        "import json, sys\nbefore = set(sys.modules)\n"
        "import paicli.process_exit, paicli.secret_handoff, paicli.common.errors\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = set(json.loads(done.stdout))
    assert {"paicli.process_exit", "paicli.secret_handoff"} <= loaded
    assert not loaded & {"typing", "contextlib", "threading", "collections.abc", "paicli.cli"}
