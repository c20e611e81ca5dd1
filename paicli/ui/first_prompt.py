"""The REPL's first prompt, on screen before most of paicli is loaded (issue 16: a prompt in a quarter second).

Loading the runtime (the model client, the tools and their policy, checkpoints, the event models, plan
mode) takes several times as long as starting Python. So the REPL shows its banner and its first prompt
with what the settings alone give (model, workspace, the sandbox, the prompt's keys and history), while a
worker thread loads and builds the rest; the user types meanwhile. Completion joins once it is built. The
line typed is handed to the REPL, which then runs as before.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer, DynamicCompleter
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import merge_key_bindings

from paicli import __version__
from paicli.common.errors import EXIT_CANCELLED, EXIT_OK
from paicli.common.sanitize import terminal_safe
from paicli.common.values import Usage
from paicli.common.wrap import wrap
from paicli.config import user_home
from paicli.ui.prompt.history import history_file
from paicli.ui.prompt.interrupt import EXIT_HINT, DoubleInterrupt
from paicli.ui.prompt.prompt_line import ModeSwitch, PendingMode, prompt_keys, prompt_text, toolbar_text, tune_prompt

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.app.checkpoints.service import Checkpoints
    from paicli.app.custom_commands import CustomCommands
    from paicli.common.events import AnyEvent, EventSink
    from paicli.config import Settings
    from paicli.runtime import Runtime
    from paicli.sandbox import SandboxChoice
    from paicli.ui.chat.render import ChatRenderer
    from paicli.ui.repl import Repl


def run_repl(settings: Settings, *, continue_last: bool = False) -> int:
    """The `paicli` entry without a subcommand (`continue_last`: `-c`); returns the exit code."""
    from paicli.ui.prompt.keys import enter_stays_enter

    with enter_stays_enter():  # Ctrl+J adds a line: an Enter typed between prompts must not become one
        return asyncio.run(_serve(settings, continue_last))


async def _serve(settings: Settings, continue_last: bool = False) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    from paicli.sandbox import choose_sandbox

    home = user_home()
    s = settings
    choosing = loop.run_in_executor(
        None,
        functools.partial(  # its probe waits on bwrap: build the prompt meanwhile
            choose_sandbox,
            s.sandbox,
            workspace=s.workspace,
            home=home,
            network=s.sandbox_network,
            writable=s.sandbox_writable,
            hide=s.sandbox_hide,
        ),
    )
    first = FirstPrompt(settings, home)
    sandbox = first._sandbox = await choosing  # the toolbar shows it from the first drawing on
    banner(settings.model, settings.workspace, sandbox)
    building: asyncio.Task[Repl] | None = None

    def start_building() -> None:
        # Called as the prompt is drawn; the task's first step runs after that: loading the rest in a
        # thread beside the drawing would delay it (the two take turns at the GIL).
        nonlocal building
        if building is None:
            building = asyncio.create_task(_build(settings, sandbox, first))

    repl: Repl | None = None
    try:
        if continue_last:  # the earlier exchange is shown before the first prompt: build first, then ask
            start_building()
            assert building is not None
            repl = await building
            from paicli.ui.commands.session_commands import continue_latest

            continue_latest(repl)
            return await repl.run()
        line = await first.read(start_building)
        assert building is not None
        repl = await building
        return EXIT_OK if line is None else await repl.run(line)
    except asyncio.CancelledError:
        return EXIT_CANCELLED
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        if repl is None and building is not None:
            building.cancel()
            if building.done() and not building.cancelled():
                building.exception()  # seen: raised at the prompt already
        if repl is not None:
            await repl.runtime.aclose()
            if repl.checkpoints is not None:
                repl.checkpoints.close()


async def _build(settings: Settings, sandbox: SandboxChoice, first: FirstPrompt) -> Repl:
    """The REPL, built while the first prompt is on screen: loaded in a worker thread, then put together on
    the event loop. Then its completion joins the first prompt and the MCP servers start. A failure (a
    configuration the runtime refuses) ends the first prompt with that error."""
    try:
        console, renderer, runtime, checkpoints, held, custom = await asyncio.to_thread(_load, settings, sandbox)
        from paicli.ui.repl import Repl

        first.modes.attach(runtime.policy)  # a mode chosen at the first prompt (Shift+Tab) holds
        repl = Repl(
            runtime,
            renderer,
            console,
            checkpoints=checkpoints,
            modes=first.modes,
            history=first.session.history,
            custom=custom,
            interrupts=first.interrupts,
        )
    except Exception as error:
        if first.session.app.is_running:
            first.session.app.exit(exception=error)
        raise
    if held.held:  # above the prompt, which is redrawn below them
        await run_in_terminal(held.release)
    held.release()
    first.use_completer(repl.session.completer)
    first.join(repl)
    repl.start_servers()
    return repl


def _load(
    settings: Settings, sandbox: SandboxChoice
) -> tuple[Console, ChatRenderer, Runtime, Checkpoints | None, HeldSink, CustomCommands]:
    """Imports and builds what the REPL needs beyond its prompt (rich's console among it). In a worker
    thread, so nothing is shown from here: what the checkpoints have to say waits in a `HeldSink` until
    the event loop shows it."""
    from rich.console import Console

    from paicli.app.checkpoints.service import attach_checkpoints
    from paicli.app.custom_commands import load_custom_commands
    from paicli.common.events import Notice
    from paicli.runtime import build_runtime, secret_values
    from paicli.ui.chat.render import ChatRenderer

    console = Console(highlight=False)
    renderer = ChatRenderer(console, secrets=secret_values(settings))
    runtime = build_runtime(settings, renderer, announce=False, sandbox=sandbox)  # the banner says it
    held = HeldSink(renderer)
    custom = load_custom_commands(runtime.workspace, user_home())
    for notice in custom.notices:
        held.emit(Notice(level="warning", message=notice))
    return console, renderer, runtime, attach_checkpoints(runtime, held), held, custom


class HeldSink:
    """Keeps the events emitted to it until `release`, then passes them, and every later one, to `sink`."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.held: list[AnyEvent] | None = []

    def emit(self, event: AnyEvent) -> None:
        if self.held is None:
            self.sink.emit(event)
        else:
            self.held.append(event)

    def release(self) -> None:
        held, self.held = self.held or [], None
        for event in held:
            self.sink.emit(event)


def banner(model: str, workspace: Path, sandbox: SandboxChoice) -> None:
    """The REPL's first lines: version, model, workspace, keys; whether commands are contained. Printed
    with prompt_toolkit (rich is not loaded before the first prompt: about 15 ms), wrapped at spaces to the
    terminal's width in cells, a word longer than a line folded."""
    text = (
        f"paicli {__version__} · {model} · {workspace}\n/help for commands · ESC cancels a running turn · Ctrl-D exits"
    )
    quiet = sandbox.sandbox is not None or sandbox.mode == "off"
    for part, style in ((text, "dim"), (sandbox.describe(), "dim" if quiet else "fg:ansiyellow")):
        for line in wrapped(terminal_safe(part), shutil.get_terminal_size().columns):
            print_formatted_text(FormattedText([(style, line)]))


def wrapped(text: str, width: int) -> list[str]:
    """`text`'s lines, each run of whitespace one space, wrapped at spaces to `width` terminal cells (at least
    10; paicli/common/wrap.py)."""
    return wrap("\n".join(" ".join(line.split()) for line in text.split("\n")), max(width, 10))


class FirstPrompt:
    """The first prompt, looking and behaving like the REPL's own (same keys, history, toolbar)."""

    def __init__(self, settings: Settings, home: Path, sandbox: SandboxChoice | None = None) -> None:
        self.completer: Completer | None = None  # set once the REPL's completers are loaded
        self._model = settings.model
        self._sandbox = sandbox
        self.modes = ModeSwitch(PendingMode(settings.approval))  # the policy's once it is built
        self.interrupts = DoubleInterrupt()  # Ctrl+C twice on an empty line exits (the REPL's once it is built)
        self.toolbar: Callable[[], FormattedText] | None = None  # the REPL's once it is built
        self.session: PromptSession[str] = PromptSession(
            history=history_file(home, settings.workspace),
            multiline=True,
            key_bindings=merge_key_bindings([prompt_keys(), self.modes.keys()]),
            completer=DynamicCompleter(lambda: self.completer),
            complete_while_typing=True,
            bottom_toolbar=self._toolbar,
            prompt_continuation="  ",
        )
        tune_prompt(self.session, self.modes)

    def join(self, repl: Repl) -> None:
        """The REPL is built (with this prompt's mode switch): the toolbar is the REPL's from now on."""
        self.toolbar = repl.toolbar
        if self.session.app.is_running:
            self.session.app.invalidate()

    async def read(self, pre_run: Callable[[], None] | None = None) -> str | None:
        """The first line; None for Ctrl-D, or Ctrl-C twice on an empty line. Ctrl-C clears the line, as at any
        prompt of the REPL (paicli/ui/prompt/interrupt.py)."""
        while True:
            try:
                return await self.session.prompt_async(prompt_text(planning=False), pre_run=pre_run)
            except KeyboardInterrupt:
                line = self.session.default_buffer.text
                if self.interrupts.exits(line):
                    return None
                if not line.strip():
                    print_formatted_text(FormattedText([("fg:ansibrightblack", EXIT_HINT)]))
                continue
            except EOFError:
                return None

    def use_completer(self, completer: Completer | None) -> None:
        """Completion joins; what was typed before it did is completed now, as if typed after."""
        self.completer = completer
        buffer = self.session.default_buffer
        if self.session.app.is_running and buffer.text:
            buffer.start_completion(select_first=False)

    def _toolbar(self) -> FormattedText:
        if self.toolbar is not None:
            return self.toolbar()
        return toolbar_text(self._model, Usage(), None, modes=self.modes, sandbox=self._sandbox)
