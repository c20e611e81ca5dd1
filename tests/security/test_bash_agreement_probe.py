"""The controls of the differential test against bash (issue 27): the probe sees every program bash starts,
whichever route starts it, sees every write, and lets no real program run. Without them a quiet
differential run would mean nothing."""

from __future__ import annotations

import sys

import pytest

from tests.sandboxing import http_server
from tests.security.bashprobe import BashProbe

ROUTES = {
    "direct": "pwnmark1 a",
    "command substitution": "echo $(pwnmark1 a)",
    "backticks": "echo `pwnmark1 a`",
    "nested backticks": "echo `echo \\`pwnmark1 a\\``",
    "process substitution": "echo <(pwnmark1 a)",
    "output process substitution": "echo >(pwnmark1 a)",
    "parameter operand": "echo ${x:-$(pwnmark1 a)}",
    "arithmetic": "echo $(( $(pwnmark1 a) ))",
    "here-document": "cat <<E\n$(pwnmark1 a)\nE",
    "eval": "eval 'pwnmark1 a'",
    "function": "f() { pwnmark1 a; }; f",
    "command -p": "command -p pwnmark1 a",
    "alias": "shopt -s expand_aliases\nalias x='pwnmark1 a'\nx",
    "trap": "trap 'pwnmark1 a' EXIT",
    "background job": "(pwnmark1 a) &",
    "absolute path": "/usr/bin/pwnmark1 a",
    "no such program": "nosuchprogram a",
}


@pytest.mark.parametrize("command", ROUTES.values(), ids=ROUTES.keys())
def test_the_probe_sees_a_program_bash_starts_whatever_the_route(bash_probe: BashProbe, command: str) -> None:
    run = bash_probe.run(command)
    started = [s.words for s in run.started if s.name != "cat"]
    expected = ("nosuchprogram", "a") if "nosuch" in command else ("pwnmark1", "a")
    assert started == [expected], run


@pytest.mark.parametrize(
    ("command", "started"),
    [
        ("echo a | xargs pwnmark1 -n", ("xargs", "pwnmark1", "-n")),
        ("env x=1 pwnmark1 a", ("env", "x=1", "pwnmark1", "a")),
        ("find . -exec pwnmark1 {} +", ("find", ".", "-exec", "pwnmark1", "{}", "+")),
    ],
)
def test_a_wrapper_is_seen_with_what_it_would_run_in_its_arguments(
    bash_probe: BashProbe, command: str, started: tuple[str, ...]
) -> None:
    """The stand-in for `xargs` or `env` runs nothing: the command it would run is in its argv, which the
    differential test classifies on its own."""
    assert [s.words for s in bash_probe.run(command).started] == [started]


def test_programs_started_at_once_are_logged_whole_newlines_and_all(bash_probe: BashProbe) -> None:
    run = bash_probe.run("cat $'\\n' 'a b' | cp $'x\\ny' PWN & ls $'\\n\\n' & wait")
    assert sorted(s.words for s in run.started) == [("cat", "\n", "a b"), ("cp", "x\ny", "PWN"), ("ls", "\n\n")]


def test_a_program_in_any_covered_folder_is_named_by_its_basename(bash_probe: BashProbe) -> None:
    folders = bash_probe.search_path.split(":")
    run = bash_probe.run("; ".join(f"{folder}/ls" for folder in folders) + "; ls")
    assert [s.name for s in run.started] == ["ls"] * (len(folders) + 1)
    assert {"/usr/bin", "/bin"} <= set(folders)


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("echo x > PWN", "created ws/PWN"),
        ("echo x >> canary.txt", "changed ws/canary.txt"),
        ("true >> canary.txt", "opened for writing ws/canary.txt"),
        (": <> canary.txt", "opened for writing ws/canary.txt"),
        ("ls >| canary.txt", "changed ws/canary.txt"),
        ("ls &> PWN", "created ws/PWN"),
        ("exec {fd}>PWN", "created ws/PWN"),
        ("exec 3>>canary.txt", "opened for writing ws/canary.txt"),
        ("echo x > ../outside/PWN", "created outside/PWN"),
        ("echo x > ~/PWN", "created outside/PWN"),
        ("echo x > /tmp/PWN", "created /tmp/PWN"),
        ("echo x > ./-rf", "changed ws/-rf"),
    ],
)
def test_the_probe_sees_every_redirection_write(bash_probe: BashProbe, command: str, written: str) -> None:
    assert bash_probe.run(command).writes == (written,)


def test_the_probe_sees_a_chmod_and_a_removal_by_a_program_from_outside_the_covered_folders(
    bash_probe: BashProbe,
) -> None:
    """Only a program from outside the covered folders really runs: the probe's own Python does here."""
    code = "import os; os.chmod('canary.txt', 0o600); os.remove('empty')"
    run = bash_probe.run(f'PYTHONHOME={sys.base_prefix} /.probe/python -S -c "{code}"')
    assert run.writes == ("chmod ws/canary.txt", "removed ws/empty"), run
    assert run.started == ()


def test_no_real_program_runs(bash_probe: BashProbe) -> None:
    run = bash_probe.run(
        "touch PWN; mkdir D; rm -f canary.txt; cp canary.txt x; chmod 000 canary.txt; sh -c 'echo x > PWN'; "
        'python3 -c \'open("PWN", "w")\'; git init -q again'
    )
    assert [s.name for s in run.started] == ["touch", "mkdir", "rm", "cp", "chmod", "sh", "python3", "git"]
    assert run.writes == ()


@pytest.mark.parametrize(
    "command",
    ["cat <<E\nx $(echo y)\nE", "cat <<'E'\nx\nE", "cat <<< x", "cat <<E\n" + "x" * 100_000 + "\nE"],
    ids=["here-document", "quoted", "here-string", "larger than a pipe"],
)
def test_here_documents_are_not_writes(bash_probe: BashProbe, command: str) -> None:
    run = bash_probe.run(command)
    assert run.writes == () and [s.name for s in run.started] == ["cat"], run


def test_each_case_starts_from_a_fresh_workspace(bash_probe: BashProbe) -> None:
    assert bash_probe.run("echo x > PWN; : > canary.txt").writes
    assert bash_probe.run("[ -e PWN ] || [ ! -s canary.txt ] && pwnmark1").started == ()


def test_stdin_is_empty(bash_probe: BashProbe) -> None:
    assert bash_probe.run("read x || pwnmark1; read y && pwnmark2").names == ("pwnmark1",)


def test_a_case_that_never_ends_is_killed_with_all_it_started(bash_probe: BashProbe) -> None:
    run = bash_probe.run("(while :; do :; done) & pwnmark1; while :; do :; done", timeout=0.5)
    assert run.timed_out and run.names == ("pwnmark1",)
    assert bash_probe.run("pwnmark2").names == ("pwnmark2",)  # the next case runs as usual


def test_the_sandbox_has_no_network(bash_probe: BashProbe) -> None:
    with http_server() as (port, requested):
        run = bash_probe.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo 'GET /x HTTP/1.0' >&3 && pwnmark1")
    assert run.started == () and requested == []
