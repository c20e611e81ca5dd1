"""Custom slash commands in the REPL: each of the user's and the repository's trusted command files
(paicli/app/custom_commands.py) becomes a `Command` of the REPL's table, so /help lists it and Tab
completes it; running it sends its prompt as the user's message, or plans it (`plan: true`)."""

from __future__ import annotations

from paicli.app.custom_commands import CustomCommand, CustomCommands, expand
from paicli.app.plan_inputs import PlanRequest
from paicli.common.sanitize import one_line
from paicli.ui.commands.context import Command, CommandContext, Handler, Outcome


def custom_table(custom: CustomCommands) -> list[Command]:
    """The commands as rows of the table, after the built-in ones."""
    rows = []
    for command in custom.commands.values():
        summary, usage = one_line(command.summary, 200), one_line(command.argument_hint, 60)
        rows.append(Command(command.name, summary, custom_handler(command), usage))
    return rows


def custom_handler(command: CustomCommand) -> Handler:
    async def run(ctx: CommandContext, arg: str) -> Outcome:
        text = expand(command, arg)
        if not text:
            ctx.error(f"{command.name} has nothing to send: {one_line(str(command.path), 300)} is empty")
            return Outcome.CONTINUE
        if command.allowed_tools is not None:
            tools = ", ".join(command.allowed_tools) or "none"
            what = "plan" if command.plan else "turn"
            ctx.say(one_line(f"{command.name}: the tools of this {what}: {tools}", 300), "dim")
        if command.plan:
            await ctx.run_plan(PlanRequest(text, allowed_tools=command.allowed_tools))
        else:
            await ctx.send(text, allowed_tools=command.allowed_tools)
        return Outcome.CONTINUE

    return run
