"""Slash commands without a terminal: parsing, lookup and completion."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from paicli.ui.commands.context import Command, CommandContext, Outcome, SlashCompleter, find_command, split_command
from paicli.ui.commands.table import COMMANDS


def test_commands_are_found_by_name_or_alias() -> None:
    assert split_command("  /model   gpt-4o  ") == ("/model", "gpt-4o")
    assert split_command("/help") == ("/help", "")
    exit_command = find_command("/exit", COMMANDS)
    assert exit_command is not None and find_command("/quit", COMMANDS) is exit_command
    assert find_command("/nope", COMMANDS) is None


def test_slash_commands_complete_while_the_input_is_one_word() -> None:
    completer = SlashCompleter(COMMANDS)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/mo") == ["/model"]
    assert complete("/m") == ["/model", "/map", "/mcp"]
    assert set(complete("/")) >= {"/help", "/clear", "/model", "/exit", "/quit"}
    assert complete("/model x") == []
    assert complete("hello /m") == []


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_every_handler_resolves_and_takes_what_the_dispatcher_passes(command: Command) -> None:
    """mypy cannot see through a "module:function" string: the REPL calls `await command.run(repl, arg)`,
    so each handler must be a coroutine function taking (CommandContext, str) and returning an Outcome
    (annotated so: mypy then checks its body against the context)."""
    handler = command.resolve()
    assert inspect.iscoroutinefunction(handler)
    signature = inspect.signature(handler)
    signature.bind(object(), "arg")  # TypeError when it takes fewer, or more without defaults
    hints = typing.get_type_hints(handler)
    ctx, arg = list(signature.parameters)[:2]
    assert (hints[ctx], hints[arg], hints["return"]) == (CommandContext, str, Outcome)


def test_the_table_imports_a_named_handler_only_when_its_command_runs() -> None:
    named = {c.handler.partition(":")[0] for c in COMMANDS if isinstance(c.handler, str)}
    code = "import json, sys, paicli.ui.repl\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = named & set(json.loads(done.stdout))
    assert loaded == {"paicli.ui.commands.expand"}  # the REPL itself uses it (the Ctrl+O key)
    assert "paicli.ui.commands.plan_command" in named
