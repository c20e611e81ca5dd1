"""The argparse side: `eval report` and `eval from-commits` parse into a handler that runs the command."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from paicli.eval.builtin import builtin_suite
from paicli.eval.cli import suite_file
from paicli.eval.report_commands import add_report_and_from_commits
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="paicli eval")
    add_report_and_from_commits(top.add_subparsers(dest="eval_command"))
    return top


def test_report_parses_and_runs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    line = {"suite": "s", "task": "a", "mode": "plan", "model": "m", "repeat": 0, "outcome": "pass"}
    (run / "results.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    args = parser().parse_args(["report", str(run), "--out", str(tmp_path / "out")])
    with redirect_stdout(io.StringIO()):
        assert args.eval_handler(args) == 0
    assert (tmp_path / "out" / "report.html").is_file()


def test_from_commits_needs_its_test_command_and_out(tmp_path: Path) -> None:
    with redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        parser().parse_args(["from-commits", str(tmp_path), "--out", str(tmp_path / "o")])
    args = parser().parse_args(["from-commits", str(tmp_path), "-n", "3", "--test-command", "pytest", "--out", "o"])
    assert (args.n, args.test_command, args.since, args.setup) == (3, "pytest", None, None)
    with_setup = parser().parse_args(["from-commits", "r", "--test-command", "t", "--out", "o", "--setup", "pip i"])
    assert with_setup.setup == "pip i"
    errors = io.StringIO()
    with redirect_stderr(errors):
        assert args.eval_handler(args) == 2  # not a git repository: a usage error
    assert "not a git repository" in errors.getvalue()


def test_the_paicli_command_line_runs_report_without_a_key(tmp_path: Path, fake: FakeLLM, home: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    line = {"suite": "s", "task": "a", "mode": "chat", "model": "m", "repeat": 0, "outcome": "fail"}
    (run / "results.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    env = {k: v for k, v in paicli_env(fake, home).items() if k != "PAICLI_API_KEY"}
    done = run_paicli(["eval", "report", str(run), "--out", str(tmp_path / "out")], env)
    assert done.code == 0, done.stderr
    assert "report.md" in done.stdout and (tmp_path / "out" / "report.html").is_file()
    assert fake.requests == []


def test_a_built_in_suite_is_named_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert suite_file("python-basics") == builtin_suite("python-basics") and suite_file("python-basics").is_file()
    (tmp_path / "python-basics").write_text("name = 'mine'\n")  # a file of that name here wins
    assert suite_file("python-basics") == Path("python-basics")
    assert suite_file("no-such-suite") == Path("no-such-suite")  # load_suite then says it is missing
