"""`/model`: with no argument, the endpoint's models (GET /models) in a picker; `/model NAME` switches to a
listed model and refuses an unknown name with the list."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.shortcuts.choice_input import ChoiceInput

from paicli.common.errors import ModelError
from paicli.common.sanitize import one_line
from paicli.ui.commands.context import CommandContext, Outcome

LISTED = 12  # names shown in a refusal
PICKED = 50  # names offered in the picker

Picker = Callable[[str, Sequence[str], str], Awaitable[str | None]]


async def model_command(ctx: CommandContext, arg: str, *, pick: Picker | None = None) -> Outcome:
    name = arg.strip()
    if len(name.split()) > 1:
        ctx.error("a model name has no spaces: /model NAME")
        return Outcome.CONTINUE
    try:
        names = await ctx.list_models()
    except ModelError as err:
        names = None
        why = one_line(str(err), limit=300)
    if not name:
        ctx.say(f"model: {ctx.model}")
        if names is None:
            ctx.say(f"the server lists no models ({why}) · /model NAME switches", "dim")
            return Outcome.CONTINUE
        if not names:
            ctx.say("the server lists no models · /model NAME switches", "dim")
            return Outcome.CONTINUE
        chosen = await (pick or pick_model)(
            "Switch to which model? (Enter picks, Esc keeps the current one)", names[:PICKED], ctx.model
        )
        if chosen is None or chosen == ctx.model:
            ctx.say(f"model unchanged: {ctx.model}", "dim")
            return Outcome.CONTINUE
        name = chosen
    elif names is None:
        ctx.say(f"could not check the name against the server's list ({why})", "dim")
    elif len(names) > 1 and name not in names:
        listed = ", ".join(one_line(n, limit=80) for n in names[:LISTED])
        more = f" and {len(names) - LISTED} more (/model picks)" if len(names) > LISTED else ""
        ctx.error(f"the server does not list {one_line(name, limit=80)}; it lists {listed}{more}")
        return Outcome.CONTINUE
    elif names and name not in names:  # a server with one model may answer to any name (llama.cpp)
        ctx.say(f"the server lists only {one_line(names[0], limit=80)}; it may answer to any name", "dim")
    ctx.switch_model(name)
    ctx.say(f"model switched to {one_line(name, limit=80)} for this session", "dim")
    return Outcome.CONTINUE


async def pick_model(question: str, names: Sequence[str], current: str) -> str | None:
    """Up/Down (or a number) and Enter choose; Esc or Ctrl-C choose nothing."""
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _keep(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    options = [(name, one_line(name, limit=80) + ("  (current)" if name == current else "")) for name in names]
    picker: ChoiceInput[str | None] = ChoiceInput(
        message=question, options=options, default=current if current in names else None, key_bindings=keys
    )
    try:
        return await picker.prompt_async()
    except (KeyboardInterrupt, EOFError):
        return None
