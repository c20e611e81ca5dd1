"""Slash commands without a terminal: parsing, lookup and completion."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from paicli.ui.commands import COMMANDS
from paicli.ui.slash import SlashCompleter, find_command, split_command


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
    assert complete("/m") == ["/model", "/mcp"]
    assert set(complete("/")) >= {"/help", "/clear", "/model", "/exit", "/quit"}
    assert complete("/model x") == []
    assert complete("hello /m") == []
