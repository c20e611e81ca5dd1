"""The command-line side of `paicli eval report` and `paicli eval from-commits`: their argparse
subcommands, for the `eval` parser to add. Each sets `eval_handler`, a function of the parsed arguments
that returns the exit code; the modules behind them are imported only when the command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from paicli.common.sanitize import well_formed

DEFAULT_COMMITS = 10


def _report(args: argparse.Namespace) -> int:
    from paicli.eval.report import run_report

    return run_report([Path(d) for d in args.dirs], Path(args.out) if args.out else None)


def _from_commits(args: argparse.Namespace) -> int:
    from paicli.eval.from_commits import run_from_commits

    since = well_formed(args.since) if args.since is not None else None
    setup = well_formed(args.setup) if args.setup is not None else None
    return run_from_commits(Path(args.repo), since, args.n, well_formed(args.test_command), Path(args.out), setup=setup)


def add_report_and_from_commits(subparsers: Any) -> None:
    """Adds `report` and `from-commits` to the `eval` command's subparsers (an argparse _SubParsersAction)."""
    report = subparsers.add_parser(
        "report",
        help="merge the results of one or more output folders into report.md and report.html",
        description="Read DIR/results.jsonl of each folder (shards merge; a run recorded twice keeps its last "
        "record) and write report.md and a self-contained report.html.",
    )
    report.add_argument("dirs", nargs="+", metavar="DIR", help="an output folder of `paicli eval run`")
    report.add_argument("--out", metavar="DIR", help="where the report goes (default: DIR when one is given, else .)")
    report.set_defaults(eval_handler=_report)

    commits = subparsers.add_parser(
        "from-commits",
        help="turn commits of a repository that change tests and code into a suite",
        description="Each of the newest N non-merge commits that change test files and other files becomes a "
        "task: the parent's files in a fresh one-commit repository, the commit message as the goal, the "
        "commit's test files as the hidden check run with --test-command.",
    )
    commits.add_argument("repo", metavar="REPO", help="a git repository")
    commits.add_argument("--since", metavar="REF", help="only commits after REF")
    commits.add_argument(
        "-n", type=int, default=DEFAULT_COMMITS, metavar="N", help=f"tasks (default {DEFAULT_COMMITS})"
    )
    commits.add_argument(
        "--test-command",
        required=True,
        metavar="CMD",
        help="the command that runs the tests; {tests} in it becomes each task's own test files",
    )
    commits.add_argument("--out", required=True, metavar="DIR", help="a new (or empty) folder for the suite")
    commits.add_argument(
        "--setup", metavar="CMD", help="each task's setup command (with network, before the agent), e.g. an install"
    )
    commits.set_defaults(eval_handler=_from_commits)
