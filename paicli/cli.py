"""Entry point: parse the command line, build Settings, hand over to the REPL or headless mode.

Heavy modules (httpx2, rich, prompt_toolkit, pydantic) are imported lazily so `paicli --version` is fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paicli import __version__

if TYPE_CHECKING:
    from paicli.config import Settings
    from paicli.trust import ConfirmTrust, TrustRequest


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Global options, added to the main parser and to every subcommand so they work on either side.
    In subcommands their default is SUPPRESS, so a value given before the subcommand is not overwritten."""
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "-C",
        dest="workspace",
        metavar="DIR",
        default=default,
        help="the workspace: the folder paicli reads, changes and runs commands in (default: .)",
    )
    parser.add_argument("--model", default=default, help="model name (default: PAICLI_MODEL, else the provider's)")
    parser.add_argument(
        "--base-url",
        dest="base_url",
        default=default,
        help="API root of an OpenAI-compatible server, e.g. https://api.deepseek.com/v1",
    )
    parser.add_argument(
        "--provider",
        metavar="NAME",
        default=default,
        help="a provider preset: base URL, default model, key variable (listed below)",
    )
    parser.add_argument(
        "--max-parallel",
        dest="max_parallel",
        type=int,
        default=default,
        metavar="N",
        help="plan tasks that may run at the same time (default 4)",
    )
    parser.add_argument(
        "--max-replans",
        dest="max_replans",
        type=int,
        default=default,
        metavar="N",
        help="times a failed plan is planned again around the failure (default 2)",
    )
    parser.add_argument(
        "--schedule",
        choices=["eager", "batch"],
        default=default,
        help="eager (default): a task starts once its dependencies are done; batch: level by level",
    )
    parser.add_argument(
        "--no-review",
        dest="no_review",
        action="store_true",
        default=default,
        help="skip the model's review of a finished plan's result",
    )
    parser.add_argument(
        "--approval",
        choices=["ask", "auto", "yolo"],
        default=default,
        help="ask before risky calls (REPL default), refuse them (auto, headless default), or "
        "run them (yolo; the denylist still applies)",
    )
    parser.add_argument(
        "--dangerously-skip-approvals",
        dest="yolo",
        action="store_true",
        default=default,
        help="same as --approval yolo",
    )
    parser.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "off"],
        default=default,
        help="contain commands with bubblewrap: when it works (auto, the default), always, never",
    )
    parser.add_argument(
        "--sandbox-hide",
        # a subcommand's values would replace the main parser's (argparse copies its namespace over): kept apart
        dest="sandbox_hide_after" if suppress else "sandbox_hide",
        action="append",
        metavar="PATH",
        default=default,
        help="also hide this file or folder from sandboxed commands (repeatable; adds to sandbox_hide)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        default=default,
        help="continue this workspace's last conversation (the REPL and `run`)",
    )


def _plan_options(parser: argparse.ArgumentParser, *, suppress: bool, hidden: bool = False) -> None:
    """--resume and --from: only `plan` runs them. The main parser takes them too, hidden, so `paicli
    --resume ID plan` keeps working (global options go before or after the subcommand)."""
    default: Any = argparse.SUPPRESS if suppress else None

    def shown(text: str) -> str:
        return argparse.SUPPRESS if hidden else text

    parser.add_argument(
        "--resume",
        metavar="ID",
        default=default,
        help=shown("continue a saved plan: any unique beginning of its id (/plans lists them)"),
    )
    parser.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE.json",
        default=default,
        help=shown('run a plan written by hand: {"goal", "summary", "tasks": [...]}'),
    )


DESCRIPTION = """A plan-then-execute coding agent for the terminal.

`paicli` alone opens the interactive REPL in the workspace: type a message, or `/plan GOAL`; /help lists
the rest. The subcommands run without a terminal (headless)."""

ENVIRONMENT = """environment:
  PAICLI_API_KEY           the API key; else the provider's own variable (below), else OPENAI_API_KEY
                           (for openai or a custom base URL only); a server on 127.0.0.1 needs none
  PAICLI_BASE_URL          API root (else OPENAI_BASE_URL); requests go to {base}/chat/completions
  PAICLI_MODEL             model name
  PAICLI_PROVIDER          a provider preset, like --provider
  PAICLI_PLAN_MAX_REPLANS  like --max-replans
  settings also come from .paicli/config.toml in the workspace and ~/.paicli/config.toml (docs/configuration.md)

provider presets (--provider NAME):
"""
KEYS = """

provider keys: DEEPSEEK_API_KEY, MOONSHOT_API_KEY, DASHSCOPE_API_KEY, ZHIPUAI_API_KEY, OPENROUTER_API_KEY;
local servers need none.

exit codes: 0 done, 1 plan failed or model unreachable, 2 usage or configuration error, 130 cancelled."""


def build_parser() -> argparse.ArgumentParser:
    from paicli.llm.providers import presets_help

    parser = argparse.ArgumentParser(
        prog="paicli",
        description=DESCRIPTION,
        epilog=ENVIRONMENT + presets_help() + KEYS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"paicli {__version__}")
    _global_options(parser, suppress=False)
    _plan_options(parser, suppress=False, hidden=True)
    commands = parser.add_subparsers(dest="command", metavar="{run,plan,undo,doctor,map,eval}")
    run = commands.add_parser(
        "run",
        help="one ReAct turn, no plan; the final answer goes to stdout",
        description="One ReAct turn without a plan: the final answer goes to stdout, progress to stderr.",
    )
    run.add_argument("prompt", help="what to do, or /NAME: a custom command (~/.paicli/commands, .paicli/commands)")
    run.add_argument("arguments", nargs="*", metavar="ARGS", help="after /NAME: the custom command's arguments")
    run.add_argument("--json", action="store_true", help="JSON-lines events on stdout instead")
    _global_options(run, suppress=True)
    plan = commands.add_parser(
        "plan",
        help="plan, review, execute",
        description="Plan GOAL as a task graph, review it (on a terminal), run it; without a terminal --yes is needed.",
    )
    plan.add_argument("goal", nargs="?", default=None, help="what to achieve")
    plan.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help=(
            "approve the plan unasked, and every later round too (a replan after a failure or a low review "
            "score runs without being shown); needed without a terminal"
        ),
    )
    plan.add_argument(
        "--early",
        action="store_true",
        help=(
            "with --yes: start read-only tasks (FILE_READ, ANALYSIS) while the planner still writes the plan; "
            "writers, commands and checks wait for the whole plan (setting early_start)"
        ),
    )
    plan.add_argument("--json", action="store_true", help="JSON-lines events on stdout instead")
    _plan_options(plan, suppress=True)
    _global_options(plan, suppress=True)
    undo = commands.add_parser("undo", help="take back the latest (or the named) plan or turn, or one task of it")
    undo.add_argument("id", nargs="?", default=None, metavar="ID", help="a plan id or a turn id (--list shows them)")
    undo.add_argument("--task", metavar="TASK_ID", help="take back only this task of the plan")
    undo.add_argument("--dry-run", dest="dry_run", action="store_true", help="show what would change; change nothing")
    undo.add_argument("--force", action="store_true", help="also overwrite files changed since")
    undo.add_argument("--list", action="store_true", help="list the turns and plans that can be undone")
    undo.add_argument("--redo", action="store_true", help="take the last undo back")
    _global_options(undo, suppress=True)
    doctor = commands.add_parser("doctor", help="probe the configured endpoint's capabilities")
    doctor.add_argument("--json", action="store_true", help="one JSON object on stdout")
    doctor.add_argument("--refresh", action="store_true", help="forget what was remembered about servers first")
    _global_options(doctor, suppress=True)
    repo_map = commands.add_parser(
        "map",
        help="the repository map the planner would be given for GOAL",
        description="The repository map the planner would be given for GOAL (no model request).",
    )
    repo_map.add_argument("goal", nargs="?", default="", help="what the plan would be for (default: none)")
    repo_map.add_argument("--json", action="store_true", help="one JSON object on stdout")
    repo_map.add_argument("--tokens", type=int, default=None, metavar="N", help="the map's budget (map_tokens)")
    _global_options(repo_map, suppress=True)
    from paicli.eval.cli import add_eval_parser  # `eval run`, `eval report`, `eval from-commits`

    add_eval_parser(commands, lambda sub: _global_options(sub, suppress=True))
    return parser


SETTING_FLAGS = ("model", "base_url", "provider", "max_parallel", "max_replans", "schedule", "approval", "sandbox")


def settings_flags(args: argparse.Namespace) -> dict[str, Any]:
    flags: dict[str, Any] = {name: getattr(args, name, None) for name in SETTING_FLAGS}
    if getattr(args, "no_review", None):
        flags["review"] = False
    if getattr(args, "yolo", None):
        flags["approval"] = "yolo"
    if getattr(args, "early", None):
        flags["early_start"] = True
    hide = [*(getattr(args, "sandbox_hide", None) or ()), *(getattr(args, "sandbox_hide_after", None) or ())]
    if hide:
        flags["sandbox_hide"] = hide
    return flags


def main(argv: Sequence[str] | None = None) -> int:
    """`argv` None means paicli is the program (not called from Python), so it may restart itself to
    get the API key out of its environment (paicli/secret_handoff.py)."""
    args = build_parser().parse_args(argv)
    from paicli.common.sanitize import well_formed

    for text in ("prompt", "goal"):  # bytes that are not UTF-8 arrive as lone surrogates (os.fsdecode)
        if isinstance(getattr(args, text, None), str):
            setattr(args, text, well_formed(getattr(args, text)))
    import os
    from pathlib import Path

    from paicli.common.errors import EXIT_CANCELLED, EXIT_USAGE, ConfigError
    from paicli.llm.providers import KEY_VARIABLES
    from paicli.secret_handoff import HandoffError, secure_start

    try:
        handed_over = secure_start(KEY_VARIABLES) if argv is None else {}
    except HandoffError as err:
        print(f"paicli: {err}", file=sys.stderr)
        return EXIT_USAGE

    from paicli.config_sources import load_settings

    confirm: ConfirmTrust | None = None
    if args.command is None and sys.stdin.isatty():
        confirm = _confirm_trust
    try:
        settings = load_settings(
            settings_flags(args),
            workspace=Path(args.workspace or "."),
            env={**os.environ, **handed_over},
            confirm_trust=confirm,
            warn=_warn_on_stderr,
        )
        if args.command != "plan" and (getattr(args, "resume", None) or getattr(args, "from_file", None)):
            raise ConfigError("--resume and --from go with `paicli plan`")
        if getattr(args, "continue_last", None) and args.command not in (None, "run"):
            raise ConfigError(
                f"-c/--continue goes with the REPL and `paicli run`, not `paicli {args.command}`"
                + (" (--resume ID continues a saved plan)" if args.command == "plan" else "")
            )
        if args.command is None:
            if not sys.stdin.isatty():
                raise ConfigError('the REPL needs a terminal; for one prompt without one use `paicli run "PROMPT"`')
            settings.require_key()
            from paicli.ui.first_prompt import run_repl

            return run_repl(settings, continue_last=bool(args.continue_last))
        if args.command == "doctor":
            from paicli.doctor import doctor_command

            return doctor_command(settings, json_mode=args.json, refresh=args.refresh)
        if args.command == "map":
            from paicli.map_command import map_command

            if args.tokens is not None:
                settings = settings.model_copy(update={"map_tokens": max(0, args.tokens)})
            return map_command(settings, args.goal, json_mode=args.json)
        if args.command == "eval":
            from paicli.eval.cli import eval_command

            return eval_command(settings, args)
        if args.command == "run":
            from paicli.headless import run_command

            if args.arguments:  # `paicli run /NAME ARGS`: as if typed in the REPL
                if not args.prompt.startswith("/"):
                    raise ConfigError("paicli run takes one PROMPT: quote it (ARGS follow a /NAME custom command)")
                import shlex

                args.prompt = " ".join([args.prompt, shlex.join(map(well_formed, args.arguments))])
            return run_command(
                settings, args.prompt, json_mode=args.json, continue_last=bool(getattr(args, "continue_last", None))
            )
        if args.command == "undo":
            from paicli.headless import undo_command

            return undo_command(
                settings,
                args.id,
                task=args.task,
                dry_run=args.dry_run,
                force=args.force,
                list_only=args.list,
                redo=args.redo,
            )
        return plan_front_end(settings, args)
    except ConfigError as err:
        from paicli.common.sanitize import terminal_safe

        print(f"paicli: {terminal_safe(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_CANCELLED


def _warn_on_stderr(message: str) -> None:
    """How the command line reports what the configuration loader ignored (the loader never prints)."""
    from paicli.common.sanitize import terminal_safe

    print(f"paicli: warning: {terminal_safe(message)}", file=sys.stderr)


def _confirm_trust(request: TrustRequest) -> bool:
    from paicli.ui.prompt.approval_prompt import confirm_trust  # loaded only when a repository config needs asking

    return confirm_trust(request)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def plan_front_end(settings: Settings, args: argparse.Namespace) -> int:
    """`paicli plan`: headless with --yes; on a terminal without it, the review screen and live view."""
    from paicli.app.plan_inputs import plan_request
    from paicli.common.errors import ConfigError

    resume, from_file = getattr(args, "resume", None), getattr(args, "from_file", None)
    if not args.goal and not resume and not from_file:
        raise ConfigError("paicli plan needs a GOAL (or --resume ID / --from FILE.json)")
    screen = sys.stderr if args.json else sys.stdout  # where an interactive review draws
    if args.early and not args.yes:
        raise ConfigError("--early goes with --yes: tasks start before the plan is complete, so nobody reviews it")
    if not args.yes and not (sys.stdin.isatty() and screen.isatty()):
        raise ConfigError("paicli plan without a terminal needs --yes to approve the plan unasked")
    settings.require_key()
    # Checking a plan of 10,000 tasks takes a moment, before `run_with_signals` listens: SIGTERM cancels it
    # as SIGINT does (KeyboardInterrupt, exit 130).
    import signal

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        request = plan_request(settings.workspace, args.goal, resume=resume, from_file=from_file)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.yes:
        from paicli.headless import plan_command

        return plan_command(settings, request, json_mode=args.json)
    from paicli.ui.plan.plan_runner import plan_in_terminal

    return plan_in_terminal(settings, request, json_mode=args.json)


if __name__ == "__main__":
    raise SystemExit(main())
