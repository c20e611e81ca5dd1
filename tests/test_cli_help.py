"""First contact: `paicli --help` says what `paicli` alone does, explains every option, lists the
environment variables; plan-only options appear on `plan` alone."""

from __future__ import annotations

import argparse
from pathlib import Path

from paicli.cli import build_parser
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_has_a_help_text() -> None:
    parser = build_parser()
    for name, command in [("paicli", parser), *subcommands(parser).items()]:
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            assert action.help, f"{name} {action.option_strings or action.dest} has no help text"


def test_plan_only_options_are_offered_by_plan_alone() -> None:
    commands = subcommands(build_parser())
    assert "--resume" in commands["plan"].format_help() and "--from" in commands["plan"].format_help()
    for name in ("run", "undo", "doctor"):
        assert "--resume" not in commands[name].format_help() and "--from" not in commands[name].format_help()
    assert "--resume" not in build_parser().format_help()  # accepted before `plan`, not offered


def test_help_mentions_the_repl_and_the_environment(fake: FakeLLM, home: Path) -> None:
    shown = run_paicli(["--help"], paicli_env(fake, home))
    assert shown.code == 0
    text = " ".join(shown.stdout.split())
    assert "`paicli` alone opens the interactive REPL" in text
    for variable in (
        "PAICLI_API_KEY",
        "PAICLI_BASE_URL",
        "PAICLI_MODEL",
        "PAICLI_PROVIDER",
        "OPENAI_API_KEY",
        "PAICLI_PLAN_MAX_REPLANS",
    ):
        assert variable in text
    assert "plan tasks that may run at the same time" in text  # --max-parallel explained


def test_resume_with_another_command_is_a_usage_error(fake: FakeLLM, home: Path, workspace: Path) -> None:
    env = paicli_env(fake, home)
    refused = run_paicli(["-C", str(workspace), "run", "hello", "--resume", "abc"], env)
    assert refused.code == 2 and "--resume" in refused.stderr
    refused = run_paicli(["-C", str(workspace), "--resume", "abc", "run", "hello"], env)
    assert refused.code == 2 and "--resume and --from go with `paicli plan`" in refused.stderr
    assert fake.requests == []
