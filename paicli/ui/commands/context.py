"""What a slash command is, and what its handler may see and do (`CommandContext`, not the whole REPL).

A command is a name, a one-line summary for /help, and an async handler that gets the context and the
text after the name; a handler whose module can wait is named as "module:function" and imported when the
command first runs. The table of commands is in paicli/ui/commands/table.py.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from rich.console import RenderableType

from paicli.app.plan_inputs import PlanRequest
from paicli.common.values import Usage
from paicli.llm.price import Price
from paicli.policy.approval import ApprovalPolicy
from paicli.sandbox import SandboxChoice

if TYPE_CHECKING:
    from paicli.app.checkpoints.service import Checkpoints
    from paicli.app.conversations import ConversationLog, Restored
    from paicli.app.driver import TurnOutcome
    from paicli.app.sessions import LoadedSession
    from paicli.mcp.manager import McpManager
    from paicli.repomap.files import Lister
    from paicli.ui.chat.transcript import Transcript
    from paicli.ui.commands.usage_view import PlanUsage


class Outcome(enum.Enum):
    CONTINUE = "continue"
    EXIT = "exit"


class CommandContext(Protocol):
    """What a slash command may read and do in the REPL."""

    @property
    def workspace(self) -> Path: ...

    @property
    def home(self) -> Path: ...

    @property
    def map_tokens(self) -> int:
        """The repository map's budget (Settings.map_tokens), for /map."""
        ...

    @property
    def map_lister(self) -> Lister:
        """The session's listing of the workspace for the map (the plans' too: kept up to date by a watch)."""
        ...

    def map_ready(self) -> None:
        """Returns once the session's index warm-up is done (at once without one), as a plan's map waits."""
        ...

    @property
    def policy(self) -> ApprovalPolicy | None: ...

    @property
    def sandbox(self) -> SandboxChoice: ...

    @property
    def model(self) -> str: ...

    @property
    def last_thinking(self) -> str: ...

    @property
    def session_usage(self) -> Usage: ...

    @property
    def prices(self) -> Mapping[str, Price]: ...

    @property
    def plan_usages(self) -> Sequence[PlanUsage]:
        """The tokens of each plan run in this session, in order."""
        ...

    @property
    def checkpoints(self) -> Checkpoints | None: ...

    @property
    def mcp(self) -> McpManager | None: ...

    @property
    def transcript(self) -> Transcript:
        """The last turn or plan whole (its tool outputs, diffs and answer), for /expand and /transcript."""
        ...

    def say(self, text: str, style: str = "") -> None: ...

    def error(self, text: str) -> None: ...

    def show(self, renderable: RenderableType) -> None: ...

    async def page(self, renderable: RenderableType) -> None:
        """Shows `renderable`, through a pager when it is longer than the screen."""
        ...

    async def confirm(self, question: str) -> bool:
        """Asks a yes/no question; only a yes is True."""
        ...

    async def ask(self, question: str) -> str:
        """Asks for a line of text; "" when the user gives up (Ctrl-C, Ctrl-D)."""
        ...

    @property
    def conversations(self) -> ConversationLog:
        """Where this conversation is saved as it goes; `.store` holds the earlier ones."""
        ...

    async def read_only_turn(self, request: str) -> TurnOutcome:
        """A turn outside the conversation whose tools may only read (/init): its tool lines show, its
        answer does not stream (it is returned); ESC cancels it."""
        ...

    def resume_conversation(self, session: LoadedSession) -> Restored:
        """Continues a saved conversation: what fits the context becomes this conversation."""
        ...

    def note_for_model(self, text: str) -> None:
        """Told to the model with the next message (what the user changed behind its back)."""
        ...

    def switch_model(self, name: str) -> None: ...

    async def list_models(self) -> list[str]:
        """The models the endpoint lists (GET /models); ModelError when it lists none."""
        ...

    def clear_conversation(self) -> None: ...

    async def compact(self) -> None: ...

    def plan_next_message(self) -> None: ...

    @property
    def commands(self) -> Sequence[Command]:
        """Every slash command: the built-in ones (table.py), then the custom ones (custom_command.py)."""
        ...

    async def send(self, text: str, *, allowed_tools: tuple[str, ...] | None = None) -> None:
        """Sends `text` as the user's next message (its `@path` mentions attach); `allowed_tools` (a
        custom command's) are the only tools of that turn."""
        ...

    async def run_plan(self, request: PlanRequest) -> None: ...


Handler = Callable[[CommandContext, str], Awaitable[Outcome]]


@dataclass(frozen=True)
class Command:
    name: str  # with the slash: "/model"
    summary: str
    handler: Handler | str  # or "module:function", imported when the command first runs (start-up stays light)
    usage: str = ""  # what follows the name, e.g. "[NAME]"
    aliases: tuple[str, ...] = ()

    async def run(self, ctx: CommandContext, arg: str) -> Outcome:
        return await self.resolve()(ctx, arg)

    def resolve(self) -> Handler:
        """The handler itself; mypy cannot see through the string (tests/ui/commands/test_table.py checks it)."""
        if not isinstance(self.handler, str):
            return self.handler
        module, _, function = self.handler.partition(":")
        handler: Handler = getattr(importlib.import_module(module), function)
        return handler


def find_command(name: str, commands: Iterable[Command]) -> Command | None:
    for command in commands:
        if name == command.name or name in command.aliases:
            return command
    return None


def split_command(text: str) -> tuple[str, str]:
    """ "/model  gpt-4o" → ("/model", "gpt-4o")."""
    name, _, arg = text.strip().partition(" ")
    return name, arg.strip()


class SlashCompleter(Completer):
    """Completes a command name while the input is a single word starting with "/"."""

    def __init__(self, commands: Sequence[Command]) -> None:
        self.commands = list(commands)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        word = document.text_before_cursor
        if not word.startswith("/") or any(ch.isspace() for ch in word):
            return
        for command in self.commands:
            for name in (command.name, *command.aliases):
                if name.startswith(word):
                    yield Completion(name, start_position=-len(word), display_meta=command.summary)
