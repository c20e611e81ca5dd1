"""Custom slash commands in the REPL without a terminal: their rows in /help and completion, and what
running one sends (a message, or a plan), through a small context."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from paicli.app.custom_commands import BUILTIN_COMMANDS, load_custom_commands
from paicli.app.plan_inputs import PlanRequest
from paicli.ui.commands.context import Outcome, SlashCompleter, find_command
from paicli.ui.commands.custom_command import custom_table
from paicli.ui.commands.table import COMMANDS, HelpText


def test_the_names_a_custom_command_may_not_take_are_the_tables() -> None:
    assert {name for c in COMMANDS for name in (c.name, *c.aliases)} == BUILTIN_COMMANDS


def commands_in(home: Path) -> list[object]:
    (home / ".paicli" / "commands" / "frontend").mkdir(parents=True)
    (home / ".paicli" / "commands" / "frontend" / "review.md").write_text(
        "---\ndescription: review the \x1b[31mfront end\nargument-hint: [FILE]\n---\nReview $1 in the UI."
    )
    (home / ".paicli" / "commands" / "release.md").write_text(
        "---\nplan: true\nallowed-tools: read_file\n---\nRelease $ARGUMENTS"
    )
    return [*COMMANDS, *custom_table(load_custom_commands(home, home))]


def test_help_and_completion_show_custom_commands_with_their_description(tmp_path: Path) -> None:
    commands = commands_in(tmp_path)
    completer = SlashCompleter(commands)  # type: ignore[arg-type]
    shown = {c.text: c.display_meta_text for c in completer.get_completions(Document("/fr"), CompleteEvent())}
    assert shown == {"/frontend:review": "review the \\x1b[31mfront end (your command)"}  # escaped, never a colour
    console = Console(width=120, record=True)
    console.print(HelpText(commands))  # type: ignore[arg-type]
    text = console.export_text()
    assert "/frontend:review [FILE]" in text and "your command release.md" in text and "/help" in text


class Context:
    def __init__(self) -> None:
        self.sent: list[tuple[str, tuple[str, ...] | None]] = []
        self.planned: list[PlanRequest] = []
        self.said: list[str] = []

    def say(self, text: str, style: str = "") -> None:
        self.said.append(text)

    def error(self, text: str) -> None:
        self.said.append("error: " + text)

    async def send(self, text: str, *, allowed_tools: tuple[str, ...] | None = None) -> None:
        self.sent.append((text, allowed_tools))

    async def run_plan(self, request: PlanRequest) -> None:
        self.planned.append(request)


async def test_a_command_sends_its_prompt_and_one_that_says_plan_plans_it(tmp_path: Path) -> None:
    commands = commands_in(tmp_path)
    ctx = Context()
    review, release = find_command("/frontend:review", commands), find_command("/release", commands)  # type: ignore[arg-type]
    assert review is not None and release is not None
    assert await review.run(ctx, "src/app.ts") is Outcome.CONTINUE  # type: ignore[arg-type]
    assert ctx.sent == [("Review src/app.ts in the UI.", None)] and ctx.planned == []
    await release.run(ctx, "v2.0")  # type: ignore[arg-type]
    assert ctx.planned == [PlanRequest("Release v2.0", allowed_tools=("read_file",))]
    assert ctx.said == ["/release: the tools of this plan: read_file"]
