"""The `paicli eval` subcommands: their argparse wiring (`add_eval_parser`, called by paicli/cli.py) and
`eval run`'s front end (options checked, the sandbox required, the runs driven, exit code).

`eval run`'s parser sets `handler` ("module:function", imported on first use), which `eval_command` calls
with (settings, args); `eval report` and `eval from-commits` (paicli/eval/report_commands.py) set
`eval_handler`, a function of the arguments alone. Each returns the exit code."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paicli.config import Settings
    from paicli.eval.records import Suite

AddGlobals = Callable[[argparse.ArgumentParser], None]
# The global options an agent is given as the user gave them to `eval` (the workspace, approvals and the
# sandbox are the harness's own; the model comes from --models or --model).
PASSED: tuple[tuple[str, str], ...] = (
    ("base_url", "--base-url"),
    ("provider", "--provider"),
    ("max_parallel", "--max-parallel"),
    ("max_replans", "--max-replans"),
    ("schedule", "--schedule"),
)


MAX_JOBS, MAX_REPEAT = 256, 1000


def add_eval_parser(commands: Any, add_globals: AddGlobals | None = None) -> argparse.ArgumentParser:
    """`paicli eval` and its subcommands, added to the main parser's subcommands. `add_globals` adds
    paicli's global options to a parser (paicli/cli.py passes its own: this layer cannot import it)."""
    add_globals = add_globals or (lambda parser: None)
    parser: argparse.ArgumentParser = commands.add_parser(
        "eval",
        help="plan against chat mode on tasks with hidden checks (docs/eval.md)",
        description="Run a suite of coding tasks through plan and chat mode and record what each cost (docs/eval.md).",
    )
    add_globals(parser)
    sub = parser.add_subparsers(dest="eval_command", metavar="{run,report,from-commits}")
    run = sub.add_parser(
        "run",
        help="run a suite: every task x mode x model x repeat, results in DIR/results.jsonl",
        description="Run every task of SUITE in each mode with each model, in a fresh copy, then its hidden check.",
    )
    run.add_argument(
        "suite", metavar="SUITE", help="a suite file (TOML, docs/eval.md) or a built-in suite's name (python-basics)"
    )
    run.add_argument("--mode", default="plan,chat", help="plan, chat or plan,chat (default: both)")
    run.add_argument("--models", default=None, metavar="A,B", help="models to compare (default: the configured one)")
    run.add_argument("--jobs", type=int, default=1, metavar="N", help="runs at the same time (default 1)")
    run.add_argument("--repeat", type=int, default=1, metavar="K", help="runs of each task, mode and model (default 1)")
    run.add_argument("--out", default="eval-results", metavar="DIR", help="the results folder (default: eval-results)")
    run.add_argument("--shard", default="1/1", metavar="K/N", help="run only the K-th of N shares of the runs")
    run.add_argument(
        "--unsandboxed",
        action="store_true",
        help="run without a working sandbox: the agents' commands and the checks then run as you",
    )
    run.add_argument("--json", action="store_true", help="progress as JSON lines on stdout")
    add_globals(run)
    run.set_defaults(handler="paicli.eval.cli:run_command")
    from paicli.eval.report_commands import add_report_and_from_commits

    add_report_and_from_commits(sub)
    return parser


def eval_command(settings: Settings, args: argparse.Namespace) -> int:
    """Runs the chosen `eval` subcommand."""
    import importlib

    from paicli.common.errors import ConfigError

    direct = getattr(args, "eval_handler", None)
    if callable(direct):  # report, from-commits: no model, no settings needed
        code: int = direct(args)
        return code
    handler = getattr(args, "handler", None)
    if not isinstance(handler, str):
        raise ConfigError("paicli eval needs a subcommand: run, report or from-commits (paicli eval --help)")
    module, _, name = handler.partition(":")
    function: Callable[[Settings, argparse.Namespace], int] = getattr(importlib.import_module(module), name)
    return function(settings, args)


def run_command(settings: Settings, args: argparse.Namespace) -> int:
    from paicli.common.errors import EXIT_CANCELLED, EXIT_OK, ConfigError
    from paicli.common.wording import counted
    from paicli.config import user_home
    from paicli.eval.commands import Containing
    from paicli.eval.matrix import matrix, parse_models, parse_modes, parse_shard, to_run
    from paicli.eval.progress import JsonProgress, RichProgress
    from paicli.eval.results import done_keys, recorded
    from paicli.eval.runner import EvalSetup, make_base
    from paicli.eval.suite_file import load_suite
    from paicli.sandbox import choose_sandbox

    if not 1 <= args.jobs <= MAX_JOBS or not 1 <= args.repeat <= MAX_REPEAT:
        raise ConfigError(f"--jobs takes 1 to {MAX_JOBS}, --repeat 1 to {MAX_REPEAT}")
    modes, shard = parse_modes(args.mode), parse_shard(args.shard)
    models = parse_models(args.models) if args.models else (settings.model,)
    suite = load_suite(suite_file(args.suite))
    out = results_folder(args.out, suite)
    home = user_home()
    out.mkdir(parents=True, exist_ok=True)
    records, unreadable = recorded(out)
    if unreadable:
        print(
            f"paicli eval: {counted(unreadable, 'line')} of {out / 'results.jsonl'} unreadable: their runs run again",
            file=sys.stderr,
        )
    planned = matrix(suite, modes, models, args.repeat)
    runs = to_run(planned, shard, done_keys(records))
    skipped = sum(1 for run in planned if run.index % shard[1] == shard[0] - 1) - len(runs)
    base = make_base()
    try:
        hidden = hidden_paths(suite.root, out, base)
        containing = Containing(
            True, home, (*settings.sandbox_hide, *map(str, hidden)), tuple(settings.sandbox_writable)
        )
        try:
            choose_sandbox("bwrap", workspace=base / "runs", home=home, hide=containing.hide)
        except ConfigError as err:
            if not args.unsandboxed:
                raise ConfigError(
                    f"eval runs the agents' commands and the hidden checks in a sandbox, and there is none here "
                    f"({str(err).removeprefix('--sandbox bwrap: ')}); --unsandboxed runs them without one"
                ) from None
            containing = Containing(False, home)
        setup = EvalSetup(
            suite=suite,
            out=out,
            base=base,
            containing=containing,
            passed=passed_options(args),
            env=agent_environment(settings, base / "rate-gate"),
            home=home,
            prices=settings.prices,
            agent_hide=(*hidden, base / "checks"),
        )
        progress = JsonProgress() if args.json else RichProgress()
        progress.begin(len(runs), skipped)
        finished: list[Any] = []
        cancelled = asyncio.run(_drive(setup, runs, args.jobs, progress, finished))
        progress.end(len(finished), sum(1 for r in finished if r.outcome == "pass"), cancelled)
        return EXIT_CANCELLED if cancelled else EXIT_OK
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def _drive(setup: Any, runs: Any, jobs: int, progress: Any, finished: list[Any]) -> bool:
    """Runs them all; True when SIGINT or SIGTERM cancelled the eval (what finished is in `finished`)."""
    from paicli.eval.runner import run_all

    class Collecting:
        def started(self, run: Any) -> None:
            progress.started(run)

        def finished(self, run: Any, record: Any) -> None:
            finished.append(record)
            progress.finished(run, record)

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        main.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt)
    try:
        await run_all(setup, runs, jobs, Collecting())
    except asyncio.CancelledError:
        if not interrupted:
            raise
        main.uncancel()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return interrupted


def agent_environment(settings: Settings, rate_gate: Path | None = None) -> dict[str, str]:
    """This process's environment for the agents, with the key: paicli took it out of its own environment
    at start-up (paicli/secret_handoff.py) and each agent does the same with it. `rate_gate`: the folder
    where the agents tell each other of a rate limit (paicli/llm/shared_gate.py)."""
    from paicli.llm.shared_gate import FOLDER_VARIABLE
    from paicli.secret_handoff import HANDOFF_VARIABLE

    env = {name: value for name, value in os.environ.items() if name != HANDOFF_VARIABLE}
    if rate_gate is not None:
        env[FOLDER_VARIABLE] = str(rate_gate)
    key = settings.require_key()
    if key:
        env["PAICLI_API_KEY"] = key
    return env


def results_folder(given: str, suite: Suite) -> Path:
    """--out, resolved: a folder (or none yet) outside every task's starting state."""
    from paicli.common.errors import ConfigError

    out = Path(os.path.realpath(given))
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {given}: not a folder")
    for task in suite.tasks:
        for folder in (task.start, task.repo):
            if folder is not None and "://" not in folder and out.is_relative_to(os.path.realpath(suite.root / folder)):
                raise ConfigError(f"--out {given} is inside task {task.id}'s starting state: the agents would see it")
    return out


def suite_file(given: str) -> Path:
    """The suite file named on the command line: a path, or the name of a built-in suite when no file of
    that name is here."""
    from paicli.eval.builtin import builtin_suite

    path = Path(given)
    if not path.exists() and "/" not in given and (builtin := builtin_suite(given)) is not None:
        return builtin
    return path


def hidden_paths(suite_root: Path, out: Path, base: Path) -> tuple[Path, ...]:
    """What no agent may see: the suite's folder (its file and hidden checks), the results folder (check
    output) and the built-in suites in the installed package. A hidden folder that holds the runs'
    temporary folder could not be hidden from them: that is refused."""
    from paicli.common.errors import ConfigError

    builtin = Path(os.path.realpath(Path(__file__).parent / "suites"))
    paths = [suite_root, out, *([builtin] if builtin.exists() else [])]
    for path in paths:
        if base.is_relative_to(path):
            raise ConfigError(
                f"{path} holds the temporary folder of the runs ({base}), so it could not be hidden from the "
                "agents: keep the suite and --out elsewhere, or set TMPDIR to a folder outside them"
            )
    return tuple(paths)


def passed_options(args: argparse.Namespace) -> tuple[str, ...]:
    options: list[str] = []
    for name, flag in PASSED:
        value = getattr(args, name, None)
        if value is not None:
            options += [flag, str(value)]
    return tuple(options)
