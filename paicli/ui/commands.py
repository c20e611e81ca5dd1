"""Slash commands of the REPL: the table, their handlers, and their completion at the prompt.

A command is a name, a one-line summary for /help, and an async handler that gets the REPL and the text
after the name. To add one, write the handler and add a `Command` to `COMMANDS`.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from paicli.ui.repl import Repl


class Outcome(enum.Enum):
    CONTINUE = "continue"
    EXIT = "exit"


Handler = Callable[["Repl", str], Awaitable[Outcome]]


@dataclass(frozen=True)
class Command:
    name: str  # with the slash: "/model"
    summary: str
    run: Handler
    usage: str = ""  # what follows the name, e.g. "[NAME]"
    aliases: tuple[str, ...] = ()


async def show_help(repl: Repl, arg: str) -> Outcome:
    width = max(len(f"{c.name} {c.usage}".strip()) for c in COMMANDS)
    for command in COMMANDS:
        names = f"{command.name} {command.usage}".strip()
        aliases = f" (also {', '.join(command.aliases)})" if command.aliases else ""
        repl.say(f"  {names:<{width}}  {command.summary}{aliases}")
    repl.say("")
    repl.say("  Enter sends · Alt+Enter (or Esc then Enter) starts a new line · ESC or Ctrl-C cancels a running")
    repl.say("  turn · Ctrl-C at the prompt clears the line · Ctrl-D exits")
    return Outcome.CONTINUE


async def clear_conversation(repl: Repl, arg: str) -> Outcome:
    repl.clear_conversation()
    repl.say("conversation cleared", "dim")
    return Outcome.CONTINUE


async def model(repl: Repl, arg: str) -> Outcome:
    name = arg.strip()
    if not name:
        repl.say(f"model: {repl.model}")
    elif len(name.split()) > 1:
        repl.error("a model name has no spaces: /model NAME")
    else:
        repl.switch_model(name)
        repl.say(f"model switched to {name} for this session", "dim")
    return Outcome.CONTINUE


async def leave(repl: Repl, arg: str) -> Outcome:
    return Outcome.EXIT


async def plan(repl: Repl, arg: str) -> Outcome:
    from paicli.ui.plan_command import plan_slash  # plan mode loads its modules on first use

    return await plan_slash(repl, arg)


async def plans(repl: Repl, arg: str) -> Outcome:
    from paicli.ui.plan_command import list_plans

    return await list_plans(repl, arg)


async def approval(repl: Repl, arg: str) -> Outcome:
    from paicli.ui.approval import approval_command

    repl.say(approval_command(repl.runtime.policy, arg))
    return Outcome.CONTINUE


async def audit(repl: Repl, arg: str) -> Outcome:
    from paicli.audit import audit_folder
    from paicli.ui.approval import audit_command

    policy = repl.runtime.policy
    repl.say(audit_command(audit_folder(repl.runtime.home), arg, log=policy.audit if policy else None))
    return Outcome.CONTINUE


async def compact(repl: Repl, arg: str) -> Outcome:
    await repl.compact()
    return Outcome.CONTINUE


COMMANDS: list[Command] = [
    Command("/help", "list the commands and keys", show_help),
    Command("/clear", "forget the conversation", clear_conversation),
    Command("/model", "show the model, or switch to NAME for this session", model, usage="[NAME]"),
    Command("/plan", "plan GOAL (or the next message), review it, run it; `resume [ID]` continues one", plan,
            usage="[GOAL | resume [ID]]"),
    Command("/plans", "list the saved plans of this workspace", plans),
    Command("/approval", "show the approval mode and rules, or switch to ask, auto or yolo", approval,
            usage="[ask|auto|yolo]"),
    Command("/audit", "the latest N tool calls and what was decided about them", audit, usage="[N]"),
    Command("/compact", "compress the conversation into a summary of the state", compact),
    Command("/exit", "leave paicli (Ctrl-D does too)", leave, aliases=("/quit",)),
]


def find_command(name: str, commands: Iterable[Command] = COMMANDS) -> Command | None:
    for command in commands:
        if name == command.name or name in command.aliases:
            return command
    return None


def split_command(text: str) -> tuple[str, str]:
    """"/model  gpt-4o" → ("/model", "gpt-4o")."""
    name, _, arg = text.strip().partition(" ")
    return name, arg.strip()


class SlashCompleter(Completer):
    """Completes a command name while the input is a single word starting with "/"."""

    def __init__(self, commands: Iterable[Command] = COMMANDS) -> None:
        self.commands = list(commands)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        word = document.text_before_cursor
        if not word.startswith("/") or any(ch.isspace() for ch in word):
            return
        for command in self.commands:
            for name in (command.name, *command.aliases):
                if name.startswith(word):
                    yield Completion(name, start_position=-len(word), display_meta=command.summary)
