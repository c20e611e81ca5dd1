"""The review screen: the plan is shown, one key decides what happens to it.

    Enter   approve: `review_plan` returns the plan (edited or amended as it now is)
    i       amend: ask for a supplement, `await amend(plan, supplement)`, show the new plan, review again
    e       edit the plan as text in $EDITOR (or $VISUAL, or vi); validated on save
    r       rerun a completed task: asks for its id; it and every completed task depending on it go
            back to PENDING (offered when the plan has completed tasks, e.g. a resumed one)
    Ctrl+O  fold / unfold long descriptions
    Esc, q  cancel: `review_plan` returns None

Every other key, arrow keys and pasted text (bracketed paste) do nothing. Keys are read by a small
prompt_toolkit Application run with `run_async`, so this works inside the REPL's running event loop.
The plan itself is printed with rich into the scrollback (it may be taller than the screen); only the
key hint lives in the prompt_toolkit region. Tasks whose results come from a saved plan (a resumed one)
are listed under the plan as "completed earlier, from the saved plan": a file may say anything, so the
user sees which results are reused as they are, and can rerun them.

Failures never lose work: a failed amend keeps the old plan; an edit that does not validate is shown
with its problems and reopened with the user's own text (`e`), or kept as a draft for the next `e`
(Esc goes back to the review).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar, runtime_checkable

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import PromptSession
from rich.console import Console
from rich.text import Text

from paicli.app.figures import format_duration
from paicli.common.errors import PaicliError, PlanError
from paicli.common.sanitize import terminal_safe
from paicli.plan.model import Plan, TaskStatus
from paicli.plan.resume import rerun
from paicli.ui.plan.plan_editor import EditorError, edit_in_editor, plan_to_text, text_to_plan
from paicli.ui.plan.plan_facts import PlanFacts, estimate_line, task_facts
from paicli.ui.plan.plan_view import DESCRIPTION_INDENT, fold, plan_changes, render_plan
from paicli.ui.prompt.fragments import NBSP, Fragments, key_hint, wrapped
from paicli.ui.prompt.keys import CHORD_WAIT, ESCAPE_WAIT

T = TypeVar("T")


@runtime_checkable
class Amender(Protocol):
    """What the review needs from the planner: the plan revised with the user's supplement."""

    async def amend(self, plan: Plan, supplement: str) -> Plan: ...


AmendFunction = Callable[[Plan, str], Awaitable[Plan]]
EditText = Callable[[str], Awaitable[str | None]]  # the edited text; None when the edit was abandoned


# ---- the review loop ---------------------------------------------------------------------------------

APPROVE, AMEND, EDIT, TOGGLE, CANCEL, BACK, RERUN = "approve", "amend", "edit", "toggle", "cancel", "back", "rerun"
SAVED_SHOWN = 20  # ids listed in the "from the saved plan" note

REVIEW_KEYS = {
    "enter": APPROVE,
    "c-j": APPROVE,  # a bare line feed: some terminals and drivers send it for Enter
    "i": AMEND,
    "e": EDIT,
    "c-o": TOGGLE,
    "r": RERUN,
    "escape": CANCEL,
    "q": CANCEL,
    "c-c": CANCEL,
}
REVIEW_HINT = [("Enter", "approve"), ("i", "add to the plan"), ("e", "edit"), ("Ctrl+O", "expand"), ("Esc", "cancel")]
RERUN_HINT = ("r", "rerun a task")
RETRY_KEYS = {"e": EDIT, "escape": BACK, "q": BACK, "c-c": BACK}
RETRY_HINT = [("e", "edit again"), ("Esc", "back to the plan")]
WAIT_KEYS = {"escape": CANCEL, "c-c": CANCEL}
TIMER_REFRESH = 0.25  # seconds between redraws of the amend timer


async def review_plan(
    plan: Plan,
    *,
    console: Console,
    amend: Amender | AmendFunction,
    edit_text: EditText | None = None,
    input: Input | None = None,
    output: Output | None = None,
    facts: PlanFacts | None = None,
) -> Plan | None:
    """Shows `plan` and lets the user approve (the plan), amend, edit, or cancel (None).

    `amend` is the planner (anything with `async amend(plan, supplement)`) or that method itself.
    `edit_text` replaces the $EDITOR round trip (tests, other front ends). `input`/`output` are
    prompt_toolkit's (default: the terminal). `facts` adds each task's contract and model, the estimate
    above the plan, and the contract check of an edit.
    """
    review = _Review(console, _amend_function(amend), edit_text or edit_in_editor, input, output, facts or PlanFacts())
    return await review.run(plan)


def _amend_function(amend: Amender | AmendFunction) -> AmendFunction:
    if isinstance(amend, Amender):
        return amend.amend
    return amend


class _Review:
    def __init__(
        self,
        console: Console,
        amend: AmendFunction,
        edit_text: EditText,
        input: Input | None,
        output: Output | None,
        facts: PlanFacts,
    ) -> None:
        self.console = console
        self.facts = facts
        self.amend_plan = amend
        self.edit_text = edit_text
        self.input = input
        self.output = output
        self.expanded = False
        self.draft: tuple[Plan, str] | None = None  # an edit that did not validate, for the next `e`
        self.marks: tuple[dict[str, str], list[str]] = ({}, [])  # what the last amend or edit changed
        self.marked_plan: Plan | None = None  # the plan those marks are about

    async def run(self, plan: Plan) -> Plan | None:
        self.show(plan)
        while True:
            action = await self.choose(REVIEW_KEYS, _review_hint(plan, expanded=self.expanded))
            if action == APPROVE:
                self.note("Plan approved.", "green")
                return plan
            if action == CANCEL:
                self.note("Plan cancelled.", "yellow")
                return None
            if action == TOGGLE:
                self.expanded = not self.expanded
                self.show(plan)
            elif action == AMEND:
                plan = await self.amend(plan)
            elif action == EDIT:
                plan = await self.edit(plan)
            elif action == RERUN:
                plan = await self.rerun(plan)

    # ---- actions ----

    async def amend(self, plan: Plan) -> Plan:
        supplement = await self.ask("Add to the plan (Enter sends, Esc goes back): ")
        if not supplement:
            self.note("Nothing added.", "dim")
            return plan
        try:
            amended = await self.until_escape(self.amend_plan(plan, supplement), "Amending the plan…")
        except PaicliError as err:
            self.note(f"Could not amend the plan: {fold(str(err))}", "red")
            return plan
        except Exception as err:  # the planner is another component: its bugs must not end the review
            self.note(f"Could not amend the plan: {type(err).__name__}: {fold(str(err))}", "red")
            return plan
        if amended is None:
            self.note("Amending cancelled; the plan is unchanged.", "yellow")
            return plan
        self.show(amended, since=plan)
        return amended

    async def edit(self, plan: Plan) -> Plan:
        unchanged = plan_to_text(plan)
        text = self.draft[1] if self.draft and self.draft[0] is plan else unchanged
        while True:
            try:
                edited = await self.edit_text(text)
            except EditorError as err:
                self.note(str(err), "red")
                return plan
            if edited is None:
                self.note("The editor exited with an error; the plan is unchanged.", "yellow")
                return plan
            if edited == unchanged:
                self.draft = None
                self.note("No changes.", "dim")
                return plan
            try:
                edited_plan = self.validated(text_to_plan(edited, plan))
            except PlanError as err:
                self.note(f"The edited plan is not valid: {terminal_safe(str(err))}", "red")
                text = edited
                if await self.choose(RETRY_KEYS, RETRY_HINT) == EDIT:
                    continue
                self.draft = (plan, edited)
                self.note("Back to the plan; press e to continue your edit.", "dim")
                return plan
            self.draft = None
            self.show(edited_plan, since=plan)
            return edited_plan

    def validated(self, plan: Plan) -> Plan:
        """The edited plan if it keeps the contract (the same check as the planner's replies)."""
        problems = self.facts.problems(plan) if self.facts.problems is not None else []
        if problems:
            raise PlanError("; ".join(problems))
        return plan

    async def rerun(self, plan: Plan) -> Plan:
        if not _completed_ids(plan):
            self.note("No completed task to rerun.", "dim")
            return plan
        task_id = await self.ask("Rerun which completed task? Its id (Enter runs it again, Esc goes back): ")
        if not task_id:
            self.note("Nothing rerun.", "dim")
            return plan
        if task_id not in plan.ids():
            self.note(f"There is no task {fold(task_id)} in this plan.", "red")
            return plan
        if plan.task(task_id).status is not TaskStatus.COMPLETED:
            self.note(f"{fold(task_id)} has not completed; it runs anyway when it can.", "yellow")
            return plan
        rerun_plan, reset = rerun(plan, task_id)
        self.show(rerun_plan)
        self.note(f"Will run again: {', '.join(fold(i) for i in reset)}.", "green")
        return rerun_plan

    # ---- output ----

    def show(self, plan: Plan, *, since: Plan | None = None) -> None:
        """The plan; `since`: the plan before an amend or edit, whose new and changed tasks are marked (until
        the next change: Ctrl+O keeps the marks)."""
        if since is not None:
            self.marks = plan_changes(since, plan)
        elif plan is not self.marked_plan:
            self.marks = ({}, [])
        self.marked_plan = plan
        self.console.print()
        if self.facts.estimate is not None:
            cost = self.facts.cost(plan) if self.facts.cost is not None else None
            self.console.print(estimate_line(self.facts.estimate(plan), cost, self.facts.latest_map()))
        model_of = self.facts.model_of
        facts_width = self.console.width - DESCRIPTION_INDENT  # a command's rows wrap inside it
        self.console.print(
            render_plan(
                plan,
                expanded=self.expanded,
                facts=lambda task: task_facts(
                    task, model_of and model_of(task), expanded=self.expanded, width=facts_width
                ),
                marks=self.marks[0],
                removed=self.marks[1],
            )
        )
        unheld = self.facts.unheld(plan) if self.facts.unheld is not None else []
        if unheld:
            more = f" and {len(unheld) - SAVED_SHOWN} more" if len(unheld) > SAVED_SHOWN else ""
            listed = ", ".join(fold(task_id) for task_id in unheld[:SAVED_SHOWN]) + more
            self.console.print(
                Text(
                    f"! no sandbox: the commands of {listed} are not held to their files; each runs alone, "
                    "never beside another task that writes",
                    style="yellow",
                )
            )
        saved = [task.id for task in plan.tasks if task.from_saved and task.status is TaskStatus.COMPLETED]
        if saved:
            more = f" and {len(saved) - SAVED_SHOWN} more" if len(saved) > SAVED_SHOWN else ""
            listed = ", ".join(fold(task_id) for task_id in saved[:SAVED_SHOWN]) + more
            self.console.print(
                Text(
                    f"✓ {listed}: completed earlier, from the saved plan; their results are used as the file "
                    "has them · r reruns one",
                    style="yellow",
                )
            )

    def note(self, message: str, style: str) -> None:
        self.console.print(Text(message, style=style))

    # ---- input ----

    async def choose(self, keys: Mapping[str, str], hint: list[tuple[str, str]]) -> str:
        """Waits for one of `keys` (prompt_toolkit key names) and returns its action."""
        app = self._key_app(keys, _hint_text(hint))
        result = await app.run_async()
        return result if isinstance(result, str) else CANCEL

    async def until_escape(self, work: Awaitable[T], message: str) -> T | None:
        """Runs `work` while Esc (or Ctrl+C) can cancel it; its result, or None when cancelled."""
        started = asyncio.Event()
        since = time.monotonic()

        def waiting() -> Fragments:  # `Amending the plan… 3.2s · Esc cancels`, as planning shows it
            spent = format_duration(time.monotonic() - since)
            return [("bold", message), ("", f" {spent}"), ("fg:ansibrightblack", NBSP + "· Esc" + NBSP + "cancels")]

        app = self._key_app(WAIT_KEYS, waiting, refresh=TIMER_REFRESH)
        watcher = asyncio.ensure_future(app.run_async(pre_run=started.set))
        job = asyncio.ensure_future(work)
        try:
            await asyncio.wait({job, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if job.done():
                if not watcher.done() and not started.is_set():  # the app must be running to be told to exit
                    waiter = asyncio.ensure_future(started.wait())
                    await asyncio.wait({waiter, watcher}, return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                if not watcher.done():
                    app.exit(result=None)
                await watcher
                return job.result()
            job.cancel()
            await asyncio.gather(job, return_exceptions=True)
            return None
        finally:
            if not job.done():
                job.cancel()
            if not watcher.done():
                watcher.cancel()

    async def ask(self, message: str) -> str:
        """One line of text; Esc, Ctrl+C or Ctrl+D give "" (nothing to add)."""
        bindings = KeyBindings()

        @bindings.add("escape", eager=True)
        def _back(event: KeyPressEvent) -> None:
            event.app.exit(result="")

        session: PromptSession[str] = PromptSession(input=self.input, output=self.output, key_bindings=bindings)
        session.app.ttimeoutlen, session.app.timeoutlen = ESCAPE_WAIT, CHORD_WAIT
        try:
            answer = await session.prompt_async(message)
        except (KeyboardInterrupt, EOFError):
            return ""
        return answer.strip()

    def _key_app(
        self,
        keys: Mapping[str, str],
        hint: Fragments | Callable[[], Fragments],
        refresh: float | None = None,
    ) -> Application[str | None]:
        """A one-line application (wrapped at spaces to the terminal's width) that waits for one of `keys`;
        `hint` is redrawn every `refresh` seconds when given (a timer)."""
        bindings = KeyBindings()
        for key, action in keys.items():
            bindings.add(key, eager=True)(_exit_with(action))

        def text() -> StyleAndTextTuples:
            return [*wrapped(hint() if callable(hint) else hint, get_app().output.get_size().columns)]

        app: Application[str | None] = Application(
            layout=Layout(Window(FormattedTextControl(text), wrap_lines=True, dont_extend_height=True)),
            key_bindings=bindings,
            erase_when_done=True,
            input=self.input,
            output=self.output,
            refresh_interval=refresh,
        )
        app.ttimeoutlen, app.timeoutlen = ESCAPE_WAIT, CHORD_WAIT
        return app


def _completed_ids(plan: Plan) -> list[str]:
    return [task.id for task in plan.tasks if task.status is TaskStatus.COMPLETED]


def _review_hint(plan: Plan, *, expanded: bool = False) -> list[tuple[str, str]]:
    """The review keys as they stand: `r` only when there is a completed task to rerun, and Ctrl+O says
    what it would do now (expand, or collapse once expanded)."""
    hint = [(key, "collapse" if key == "Ctrl+O" and expanded else does) for key, does in REVIEW_HINT]
    if not _completed_ids(plan):
        return hint
    return [*hint[:3], RERUN_HINT, *hint[3:]]


def _exit_with(action: str) -> Callable[[KeyPressEvent], None]:
    def handler(event: KeyPressEvent) -> None:
        event.app.exit(result=action)

    return handler


def _hint_text(hint: list[tuple[str, str]]) -> Fragments:
    return key_hint(hint, separator_style="fg:ansibrightblack")
