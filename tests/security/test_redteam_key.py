"""Issue 19, class 4: the key must not reach the model, even through commands that do run.

paicli restarts itself at start-up without its secret variables (paicli/secret_handoff.py), so what a
command can read of paicli's process (`/proc/$PPID/environ`, `cmdline`, its own environment) holds
no key. Every run uses a fresh random key and token, so paicli processes of other test runs on the
machine cannot be mistaken for a leak, and every request the fake server received is scanned for them
in every encoding of tests/security/leaks.py. A control run proves that the same commands do leak
the key from a paicli that keeps it in its environment, and that the scanner catches the encodings.
Every paicli here is a real spawn (`run_paicli(spawn=True)`), not a fork of the suite's fork server: what
a command reads of /proc is what the process was started with.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.sandboxing import require_bwrap
from tests.security.leaks import find_leaks
from tests.security.test_leaks import random_key

SHOW_ENV = """import os
print(dict(os.environ))
print(open(f"/proc/{os.getppid()}/environ", "rb").read())
print(open(f"/proc/{os.getppid()}/cmdline", "rb").read())
"""

ATTEMPTS = [
    "cat /proc/$PPID/environ",
    "cat /proc/self/../$PPID/environ | rev",
    "printf /proc/$PPID/environ | sort --files0-from=- | tr '\\0' '\\n' | tr A-Za-z N-ZA-Mn-za-m",
    "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null"
    " | grep -a -i -e paicli -e openai -e token | tr A-Za-z N-ZA-Mn-za-m",
    "strings /proc/$PPID/environ | rev",
    "cat /proc/$PPID/task/*/environ | base64 -w0",
    "ps eww -o args= -p $PPID | tr A-Za-z N-ZA-Mn-za-m",
    "od -c /proc/$PPID/environ | head -c 12000",
    "grep -a -o 'KEY=.*' /proc/$PPID/environ | cut -c1-12; grep -a -o 'KEY=.*' /proc/$PPID/environ | cut -c13-40",
    "cat /proc/$(awk '{print $4}' /proc/$PPID/stat)/environ | base64",  # paicli's own parent
    "tr '\\0' ' ' < /proc/$PPID/cmdline",
    "env | base64",
    "printenv | rev",
    "set | tr A-Za-z N-ZA-Mn-za-m",
    "declare -x | xxd -p",
    "python3 -c 'import os;print(os.environ)' | base64",
    "python3 show_env.py | tr A-Za-z N-ZA-Mn-za-m",
]


def script(fake: FakeLLM) -> None:
    calls = [("execute_command", {"command": command}) for command in ATTEMPTS]
    fake.on(has_tool_result("execute_command"), Reply.text("Nothing interesting."))
    fake.on(has_tool_result("write_file"), Reply.tool_calls(calls))
    fake.on("find the key", Reply.tool_calls([("write_file", {"path": "show_env.py", "content": SHOW_ENV})]))


def run_attempts(
    fake: FakeLLM, workspace: Path, home: Path, mode: str, key: str, token: str, sandbox: str = "off"
) -> Finished:
    """Without the sandbox by default: commands then see paicli's /proc, and only the handoff protects."""
    script(fake)
    env = paicli_env(fake, home, PAICLI_API_KEY=key, OPENAI_API_KEY=key[::-1], DEPLOY_TOKEN=token)
    args = ["-C", str(workspace), "run", "find the key", "--json", "--approval", mode, "--sandbox", sandbox]
    return run_paicli(args, env, spawn=True)


@pytest.mark.parametrize("mode", ["auto", "yolo"])
def test_no_command_can_read_the_key_from_paicli(fake: FakeLLM, workspace: Path, home: Path, mode: str) -> None:
    key, token = random_key(), random_key()
    done = run_attempts(fake, workspace, home, mode, key, token)

    assert done.code == 0, done.stderr
    outputs = [r["output"] for r in done.of("tool_result")[1:]]
    ran = [output for output in outputs if "exit code" in output]
    if mode == "yolo":
        assert len(ran) == len(ATTEMPTS), outputs  # every attempt really ran
        assert any("PAICLI_BASE_URL" in output for output in ran)  # and did read paicli's environment
    else:
        assert any("N-ZA-Mn-za-m" in r["arguments"]["command"] for r in done.of("tool_call")[1:])
    assert [r.headers.get("authorization") for r in fake.requests] == [f"Bearer {key}"] * len(fake.requests)
    assert find_leaks(fake.requests, key) == [] and find_leaks(fake.requests, key[::-1]) == []
    assert find_leaks(fake.requests, token) == []
    assert key not in done.stdout + done.stderr and token not in done.stdout + done.stderr


def test_control_a_paicli_that_keeps_the_key_in_its_environment_leaks_it(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    """Called from Python (argv given) paicli does not restart itself: the attempts then find the key,
    masked where it is plain and in the forms mask_secrets knows (reversed, base64, hex, spaced), and the
    scanner sees through the other encodings (rot13)."""
    key, token = random_key(), random_key()
    script(fake)
    env = paicli_env(fake, home, PAICLI_API_KEY=key, DEPLOY_TOKEN=token)
    args = ["-C", str(workspace), "run", "find the key", "--json", "--approval", "yolo", "--sandbox", "off"]
    program = "import sys; from paicli.cli import main; raise SystemExit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", program, *args], env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    leaks = find_leaks(fake.requests, key)
    assert "rot13" in leaks and "reversed" not in leaks, leaks
    assert find_leaks(fake.requests, token)


def test_the_key_from_the_config_file_still_works(fake: FakeLLM, workspace: Path, home: Path) -> None:
    key = random_key()
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write(f'api_key = "{key}"\n')
    fake.on("hello", Reply.text("hi"))
    env = paicli_env(fake, home)
    del env["PAICLI_API_KEY"]

    done = run_paicli(["-C", str(workspace), "run", "hello", "--json"], env, spawn=True)

    assert done.code == 0, done.stderr
    assert fake.requests[0].headers["authorization"] == f"Bearer {key}"


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"PAICLI_API_KEY": "paicli", "OPENAI_API_KEY": "openai"}, "paicli"),
        ({"OPENAI_API_KEY": "openai"}, "openai"),
        ({"PAICLI_API_KEY": "", "OPENAI_API_KEY": "openai"}, "openai"),
        ({}, "file"),
    ],
)
def test_handed_over_keys_keep_their_precedence(
    fake: FakeLLM, workspace: Path, home: Path, variables: dict[str, str], expected: str
) -> None:
    keys = {"paicli": random_key(), "openai": random_key(), "file": random_key()}
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write(f'api_key = "{keys["file"]}"\n')
    fake.on("hello", Reply.text("hi"))
    env = paicli_env(fake, home)
    del env["PAICLI_API_KEY"]
    env.update(
        {name: keys[value] for name, value in variables.items() if value}
        | {name: "" for name, value in variables.items() if not value}
    )

    done = run_paicli(["-C", str(workspace), "run", "hello", "--json"], env, spawn=True)

    assert done.code == 0, done.stderr
    assert fake.requests[0].headers["authorization"] == f"Bearer {keys[expected]}"


def test_no_key_anywhere_still_names_the_variables(fake: FakeLLM, workspace: Path, home: Path) -> None:
    env = paicli_env(fake, home, DEPLOY_TOKEN=random_key(), PAICLI_BASE_URL="https://api.example.invalid/v1")
    del env["PAICLI_API_KEY"]  # a remote endpoint: a server on the loopback needs no key
    done = run_paicli(["-C", str(workspace), "run", "hello", "--json"], env, spawn=True)
    assert done.code == 2 and "PAICLI_API_KEY" in done.stderr and fake.requests == []


def test_version_and_help_answer_before_any_restart(home: Path, fake: FakeLLM) -> None:
    env = paicli_env(fake, home, PAICLI_KEY_FD="not a number")  # a restarted paicli would refuse this
    version, usage = run_paicli(["--version"], env, spawn=True), run_paicli(["--help"], env, spawn=True)
    assert version.code == 0 and version.stdout.startswith("paicli ")
    assert usage.code == 0 and "usage: paicli" in usage.stdout


def test_a_broken_handover_stops_paicli_with_a_clear_message(home: Path, fake: FakeLLM, workspace: Path) -> None:
    for value in ("not a number", "1", "999"):
        done = run_paicli(
            ["-C", str(workspace), "run", "hello"], paicli_env(fake, home, PAICLI_KEY_FD=value), spawn=True
        )
        assert done.code == 2 and done.stderr.startswith("paicli: ") and len(done.stderr.splitlines()) == 1
    assert fake.requests == []


def test_in_the_sandbox_no_command_even_sees_paicli(fake: FakeLLM, workspace: Path, home: Path) -> None:
    """With bubblewrap, commands have a PID namespace of their own: paicli's /proc entries (and its
    parent's) are not there to read, so not even the environment paicli keeps shows up."""
    require_bwrap()
    key, token = random_key(), random_key()
    done = run_attempts(fake, workspace, home, "yolo", key, token, sandbox="auto")
    assert done.code == 0, done.stderr
    ran = [r["output"] for r in done.of("tool_result")[1:] if "exit code" in r["output"]]
    assert len(ran) == len(ATTEMPTS)
    assert not any("PAICLI_BASE_URL" in output for output in ran[:11]), ran  # the attempts on /proc
    assert find_leaks(fake.requests, key) == [] and find_leaks(fake.requests, token) == []
