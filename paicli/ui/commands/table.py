"""The REPL's slash commands: the table, and the handlers short enough to live beside it. To add one, write
the handler and add a `Command` to `COMMANDS`, naming a handler in a module of its own as "module:function"
(imported when the command first runs: plan mode, undo and the rest load nothing before they are used);
handlers get a `CommandContext` (paicli/ui/commands/context.py), never the REPL itself."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from paicli.policy.audit import audit_folder
from paicli.ui.commands.context import Command, CommandContext, Outcome
from paicli.ui.commands.usage_view import usage_report
from paicli.ui.prompt.approval_prompt import approval_command, audit_command


async def show_help(ctx: CommandContext, arg: str) -> Outcome:
    ctx.show(HelpText(ctx.commands))
    return Outcome.CONTINUE


class HelpText:
    """The commands and keys, wrapped at spaces at any width: two columns on a wide screen, each summary
    under its command on a narrow one (under 72 columns)."""

    def __init__(self, commands: Sequence[Command] | None = None) -> None:
        self.commands = COMMANDS if commands is None else commands

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = [
            (f"{c.name} {c.usage}".strip(), c.summary + (f" (also {', '.join(c.aliases)})" if c.aliases else ""))
            for c in self.commands
        ]
        if options.max_width >= NARROW:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(no_wrap=True)
            grid.add_column(ratio=1, overflow="fold")
            for names, summary in rows:
                grid.add_row(Text(names), Text(summary))  # text, never markup: `[ask|auto|yolo]`
            yield Padding(grid, (0, 0, 0, 2))
        else:
            for names, summary in rows:
                yield Padding(Text(names, overflow="fold"), (0, 0, 0, 2))
                yield Padding(Text(summary, overflow="fold"), (0, 0, 0, 6))
        yield Text("")
        for line in KEYS_HELP:
            yield Padding(Text(line, overflow="fold"), (0, 0, 0, 2))


NARROW = 72
KEYS_HELP = (
    "Enter sends · Ctrl+J or Alt+Enter starts a new line · a pasted block stays one message",
    "Shift+Tab cycles the approval mode ask → auto → yolo (yolo asks to confirm) · the toolbar shows it",
    "Up/Down walk this workspace's history · Ctrl-R searches it · Ctrl-L clears the screen",
    "ESC or Ctrl-C cancels a running turn · Ctrl-C at the prompt clears the line, twice on an empty one "
    "exits · Ctrl-D exits",
    "Ctrl+O shows the last tool output whole (/expand) · /transcript pages the whole last turn",
    "!COMMAND runs a command yourself (its output joins the conversation) · @PATH attaches a file, a folder's "
    "listing or a glob's names (Tab completes the path)",
)


async def clear_conversation(ctx: CommandContext, arg: str) -> Outcome:
    ctx.clear_conversation()
    ctx.say("conversation cleared", "dim")
    return Outcome.CONTINUE


async def thinking(ctx: CommandContext, arg: str) -> Outcome:
    if ctx.last_thinking:
        ctx.say(ctx.last_thinking, "dim italic")
    else:
        ctx.say("no thinking yet: the model has not shown any reasoning in this session", "dim")
    return Outcome.CONTINUE


async def usage(ctx: CommandContext, arg: str) -> Outcome:
    for line in usage_report(ctx.session_usage, ctx.plan_usages, ctx.prices):
        ctx.say(line)
    return Outcome.CONTINUE


async def leave(ctx: CommandContext, arg: str) -> Outcome:
    return Outcome.EXIT


async def approval(ctx: CommandContext, arg: str) -> Outcome:
    ctx.say(approval_command(ctx.policy, arg, sandbox=ctx.sandbox))
    return Outcome.CONTINUE


async def audit(ctx: CommandContext, arg: str) -> Outcome:
    policy = ctx.policy
    ctx.say(audit_command(audit_folder(ctx.home), arg, log=policy.audit if policy else None))
    return Outcome.CONTINUE


async def compact(ctx: CommandContext, arg: str) -> Outcome:
    await ctx.compact()
    return Outcome.CONTINUE


# fmt: off
# A table: a line or two a command, as /help lists them (the formatter gives each five).
COMMANDS: list[Command] = [
    Command("/help", "list the commands and keys", show_help),
    Command("/clear", "forget the conversation", clear_conversation),
    Command("/new", "start a new conversation (this one stays saved)",
            "paicli.ui.commands.session_commands:new_conversation"),
    Command("/resume", "list the recent conversations of this workspace and continue one",
            "paicli.ui.commands.session_commands:resume", usage="[N]"),
    Command("/model", "pick one of the server's models, or switch to NAME, for this session",
            "paicli.ui.commands.model_command:model_command", usage="[NAME]"),
    Command("/plan", "plan GOAL (or the next message), review it, run it; `--go GOAL` runs it unreviewed, "
            "reads starting while it is planned; `resume [ID]` continues one",
            "paicli.ui.commands.plan_command:plan_slash", usage="[GOAL | --go GOAL | resume [ID]]"),
    Command("/plans", "list the saved plans of this workspace", "paicli.ui.commands.plan_command:list_plans"),
    Command("/approval", "show the approval mode and rules, or switch to ask, auto or yolo", approval,
            usage="[ask|auto|yolo]"),
    Command("/audit", "the latest N tool calls and what was decided about them", audit, usage="[N]"),
    Command("/undo", "take back the last turn or plan, one task of the last plan, or the turn or plan ID",
            "paicli.ui.commands.undo_commands:undo", usage="[TASK_ID | ID]"),
    Command("/redo", "take the last undo back", "paicli.ui.commands.undo_commands:redo"),
    Command("/changes", "what the last turn or plan (or a task, or ID) changed, as a diff",
            "paicli.ui.commands.undo_commands:changes", usage="[TASK_ID | ID]"),
    Command("/expand", "the last tool output whole, in a pager (Ctrl+O at the prompt)",
            "paicli.ui.commands.expand:expand"),
    Command("/transcript", "the whole last turn or plan: every tool call, its output and diff, the answer",
            "paicli.ui.commands.expand:transcript"),
    Command("/init", "read the repository and propose a PAI.md with its build, test and style commands",
            "paicli.ui.commands.init_command:init"),
    Command("/compact", "compress the conversation into a summary of the state", compact),
    Command("/map", "the repository map the planner would be given for QUERY (a goal)",
            "paicli.ui.commands.map_view:map_slash", usage="[QUERY]"),
    Command("/mcp", "the MCP servers, their status and tools; `restart NAME` starts one again",
            "paicli.ui.commands.mcp_command:mcp_slash", usage="[restart NAME]"),
    Command("/thinking", "show the model's latest reasoning in full (a reasoning model's thinking)", thinking),
    Command("/usage", "tokens used this session per model and per plan, their cost, what prompt caching saved", usage),
    Command("/exit", "leave paicli (Ctrl-D does too)", leave, aliases=("/quit",)),
]
# fmt: on
