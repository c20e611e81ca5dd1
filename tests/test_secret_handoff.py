"""secret_handoff: paicli restarts itself without its secret variables and takes them over from a pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from paicli.secret_handoff import HANDOFF_VARIABLE, HandoffError, receive, restart_without

PROGRAM = """
import ctypes, json, os, sys
from paicli.llm.providers import KEY_VARIABLES
from paicli.secret_handoff import secure_start
keys = secure_start(KEY_VARIABLES)
NAMES = ("DEPLOY_TOKEN", "PAICLI_API_KEY", "PAICLI_KEY_FD", "KEEP")
initial = open("/proc/self/environ", "rb").read()
print(json.dumps({
    "pid": os.getpid(),
    "keys": keys,
    "environ": {k: v for k, v in os.environ.items() if k in NAMES},
    "initial_has_secrets": [s for s in ("sk-one-1234567", "tok-two-1234567") if s.encode() in initial],
    "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),
    "open_fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
}))
"""


def start(env: dict[str, str]) -> dict[str, object]:
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": os.getcwd(), "KEEP": "kept"}
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM], env=base | env, stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    result: dict[str, object] = json.loads(out)
    assert result["pid"] == proc.pid  # replaced in place: the same process for the parent and the terminal
    return result


def test_secrets_leave_the_initial_environment_and_keys_come_back_only_to_the_caller() -> None:
    result = start({"PAICLI_API_KEY": "sk-one-1234567", "DEPLOY_TOKEN": "tok-two-1234567"})
    assert result["keys"] == {"PAICLI_API_KEY": "sk-one-1234567"}
    assert result["environ"] == {"DEPLOY_TOKEN": "tok-two-1234567", "KEEP": "kept"}
    assert result["initial_has_secrets"] == []
    assert result["open_fds"] == [0, 1, 2, 3]  # the pipe is closed again (3: listing /proc/self/fd)
    assert result["dumpable"] == 0


def test_without_secrets_nothing_restarts_and_nothing_changes() -> None:
    result = start({})
    assert result["keys"] == {} and result["environ"] == {"KEEP": "kept"} and result["dumpable"] == 0


def test_receive_reads_the_pipe_once_and_closes_it() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"OPENAI_API_KEY": "k", "GH_TOKEN": "t"}).encode())
    os.close(write_end)
    environ = {HANDOFF_VARIABLE: str(read_end)}
    assert receive(environ, ("PAICLI_API_KEY", "OPENAI_API_KEY")) == {"OPENAI_API_KEY": "k"}
    assert environ == {"GH_TOKEN": "t"}
    with pytest.raises(OSError):
        os.fstat(read_end)


@pytest.mark.parametrize("payload", [b"not json", b'["a"]', b'{"A_KEY": 1}'])
def test_receive_refuses_a_payload_it_cannot_read(payload: bytes) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, payload)
    os.close(write_end)
    with pytest.raises(HandoffError, match="not readable"):
        receive({HANDOFF_VARIABLE: str(read_end)}, ())


def test_receive_refuses_what_is_not_its_pipe(tmp_path: Path) -> None:
    with pytest.raises(HandoffError, match="not a file descriptor"):
        receive({HANDOFF_VARIABLE: "three"}, ())
    with tempfile.TemporaryFile() as handle, pytest.raises(HandoffError, match="not the pipe"):
        receive({HANDOFF_VARIABLE: str(handle.fileno())}, ())
    with pytest.raises(HandoffError, match="not the pipe"):
        receive({HANDOFF_VARIABLE: "0"}, ())


def test_too_much_to_hand_over_or_no_interpreter_is_an_error_before_any_exec() -> None:
    with pytest.raises(HandoffError, match="more than paicli can hand over"):
        restart_without({"BIG_TOKEN": "x" * 3_000_000}, {}, sys.executable, [sys.executable])
    with pytest.raises(HandoffError, match="cannot restart"):
        restart_without({"A_KEY": "v"}, {}, "/nonexistent/python", ["python"])
    with pytest.raises(HandoffError, match="no interpreter"):
        restart_without({"A_KEY": "v"}, {}, "", [])
