"""The review screen while the planner writes (issue 33): it opens when planning starts and fills as the
reply streams.

    Planning… 4.1s · ~640 tokens · 2 tasks so far
      scan     THINK  read the modules and list what they export
      report   WRITE  write the summary to NOTES.md
    Esc cancels planning · the plan can be approved once it is complete

Each task appears when its object in the reply is complete (`plan_task_streamed`), with the reply's running
token count and the time since planning started; a reply asked again (`reply_restarted` without a task)
takes them away. Enter does nothing here but say that the plan is not complete: approval is possible only
on the whole, validated plan, which the review screen (paicli/ui/plan/review_screen.py) then prints with its
estimate and overlap check. Esc (or Ctrl+C) cancels planning at once.

`StreamingReview` is an EventSink (fed beside the live view) and owns a small prompt_toolkit Application,
drawn in place and erased when it closes: `open(cancel)` starts it, `await close()` ends it (idempotent).
Text from the model is cleaned of control characters and secrets, and every row is cut at the screen's edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from paicli.app.figures import format_duration
from paicli.common.events import AnyEvent, PlanCreated, PlanFinished, PlanTaskStreamed, ReplyRestarted, TaskView
from paicli.common.wrap import cut
from paicli.tools.output import mask_secrets
from paicli.ui.plan.plan_view import BADGE_WIDTH, TYPE_BADGES, fold
from paicli.ui.prompt.fragments import Fragments, key_hint, wrapped
from paicli.ui.prompt.keys import CHORD_WAIT, ESCAPE_WAIT

REFRESH = 0.25  # seconds between redraws (the elapsed time ticks)
ROWS_SHOWN = 30  # task rows drawn at most; the rest are counted ("and 12 more")
ID_WIDTH = 12
# Neither says "Enter": the key hint of the whole plan's review is the one that offers it
NOT_YET = "The plan is still being written: it can be approved once it is complete."
HINT = [("Esc", "cancels planning")]
LATER = " · the plan can be approved once it is complete"


class StreamingReview:
    def __init__(
        self,
        *,
        input: Input | None = None,
        output: Output | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.input = input
        self.output = output
        self.secrets = [secret for secret in secrets if secret]
        self.tasks: dict[str, TaskView] = {}  # the streamed tasks, in the order they came
        self.tokens = 0
        self.since = time.monotonic()
        self.complete = False  # the whole plan is in (plan_created): the review screen takes over
        self.enter_pressed = False  # Enter came while the plan was being written (said, not acted on)
        self._app: Application[None] | None = None
        self._job: asyncio.Future[None] | None = None
        self._started = asyncio.Event()

    # ---- events ----

    def emit(self, event: AnyEvent) -> None:
        match event:
            case PlanTaskStreamed() if not self.complete:
                self.tasks[event.task.id] = event.task
                self.tokens = event.tokens
                self._redraw()
            case ReplyRestarted(task_id=None) if not self.complete:
                self.tasks.clear()
                self._redraw()
            case PlanCreated():
                self.complete = True
            case PlanFinished():  # planning failed or was cancelled: there is nothing to review
                self.complete = True
                self.request_close()
            case _:
                pass

    # ---- lifecycle ----

    def open(self, cancel: Callable[[], None]) -> None:
        """Shows the screen (inside the running event loop); Esc or Ctrl+C calls `cancel` and closes it."""
        if self._job is not None:
            return
        self.since = time.monotonic()
        bindings = KeyBindings()

        @bindings.add("escape", eager=True)
        @bindings.add("c-c", eager=True)
        def _cancel(event: KeyPressEvent) -> None:
            event.app.exit()
            cancel()

        @bindings.add("enter", eager=True)
        @bindings.add("c-j", eager=True)
        def _not_yet(event: KeyPressEvent) -> None:
            self.enter_pressed = True

        @bindings.add("<any>")
        def _ignore(event: KeyPressEvent) -> None:
            pass

        app: Application[None] = Application(
            layout=Layout(Window(FormattedTextControl(self._text), wrap_lines=False, dont_extend_height=True)),
            key_bindings=bindings,
            erase_when_done=True,
            input=self.input,
            output=self.output,
            refresh_interval=REFRESH,
        )
        app.ttimeoutlen, app.timeoutlen = ESCAPE_WAIT, CHORD_WAIT
        self._app = app
        self._job = asyncio.ensure_future(app.run_async(pre_run=self._started.set))

    def request_close(self) -> None:
        """Asks the screen to close (it does once the event loop runs); `close` waits for it."""
        app = self._app
        if app is not None and app.is_running and app.future is not None and not app.future.done():
            app.exit()

    async def close(self) -> None:
        """Closes the screen (erased) and waits until the terminal is the caller's again."""
        job = self._job
        if job is None:
            return
        if not job.done() and not self._started.is_set():  # the app must be running to be told to exit
            waiter = asyncio.ensure_future(self._started.wait())
            either: set[asyncio.Future[Any]] = {waiter, job}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
        self.request_close()
        with contextlib.suppress(asyncio.CancelledError, EOFError):
            await job

    # ---- drawing ----

    def _redraw(self) -> None:
        if self._app is not None and self._app.is_running:
            self._app.invalidate()

    def _text(self) -> StyleAndTextTuples:
        width = max(20, get_app().output.get_size().columns - 1)
        fragments: StyleAndTextTuples = []
        count = len(self.tasks)
        so_far = f" · {count} task{'s' if count != 1 else ''} so far" if count else ""
        tokens = f" · ~{self.tokens:,} tokens" if self.tokens else ""
        header = f" {format_duration(time.monotonic() - self.since)}{tokens}{so_far}"
        fragments += [("bold", "Planning…"), ("", cut(header, width - len("Planning…"))), ("", "\n")]
        for view in list(self.tasks.values())[:ROWS_SHOWN]:
            fragments += [*self._row(view, width), ("", "\n")]
        if count > ROWS_SHOWN:
            fragments.append(("fg:ansibrightblack", f"  and {count - ROWS_SHOWN} more\n"))
        if self.enter_pressed:
            fragments += [("fg:ansiyellow", cut(NOT_YET, width)), ("", "\n")]
        hint: Fragments = [*key_hint(HINT), ("fg:ansibrightblack", LATER)]
        fragments += wrapped(hint, width)
        return fragments

    def _row(self, view: TaskView, width: int) -> StyleAndTextTuples:
        label, colour = TYPE_BADGES[view.type]
        task_id = cut(self._safe(view.id), ID_WIDTH).ljust(ID_WIDTH)
        room = max(1, width - 2 - ID_WIDTH - 1 - BADGE_WIDTH - 2)
        return [
            ("", "  "),
            ("bold", task_id),
            ("", " "),
            (f"bold fg:ansi{colour}", label.ljust(BADGE_WIDTH)),
            ("", "  "),
            ("", cut(self._safe(view.description), room)),
        ]

    def _safe(self, text: str) -> str:
        return fold(mask_secrets(text, self.secrets)) if self.secrets else fold(text)
