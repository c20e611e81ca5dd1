"""Saving a plan on every change, off the event loop (see `PlanRecorder`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from paicli.common.errors import ConfigError
from paicli.common.events import FileChange
from paicli.common.values import Usage
from paicli.plan.model import Plan
from paicli.plan.saved_plans import PlanRecord, PlanStore, check_plan_id, render_markdown
from paicli.tools.confined import UnsafeFile

RENDER_DELAY = 0.005  # seconds between a change and the rendering that saves it (changes meanwhile join it)


class PlanRecorder:
    """The plan listener that saves a plan on every change. The id is chosen (and reserved) at the first
    save unless given (a resumed plan keeps its id).

    The first call checks the plans folder and reserves the id at once, on the caller's thread, and
    raises ConfigError if the plan cannot be saved there (a symlinked `.paicli`, say): the session then
    ends the plan FAILED with that line. After a failure the recorder stays silent.

    Inside an event loop, saving never holds up a task: the file writes (fsync included) run in a worker
    thread, one after another, and the plan is rendered to JSON again only when the previous write is
    done, so all the changes made meanwhile go to disk together in the next one. `flush()` waits until
    the latest state is on disk, and raises ConfigError if a write in the background failed.
    """

    def __init__(
        self,
        store: PlanStore,
        *,
        plan_id: str | None = None,
        usage: Callable[[], Usage] = Usage,
        failure: Callable[[], str | None] = lambda: None,
        changes: Callable[[], list[FileChange] | None] = lambda: None,
    ) -> None:
        self.store = store
        self.plan_id = None if plan_id is None else check_plan_id(plan_id)
        self._given_id = plan_id is not None  # a resumed plan: its files are the user's, never discarded
        self.usage = usage
        self.failure = failure
        self.changes = changes
        self.created_at = time.time()
        self.error: ConfigError | None = None  # saving failed: later calls do nothing
        self._unreported: ConfigError | None = None  # a failed write nobody has been told of yet
        self._ready = False
        self._plan: Plan | None = None
        self._dirty = False
        self._writer: asyncio.Task[None] | None = None
        self._hurry: asyncio.Future[None] | None = None  # set: the writer renders now, without RENDER_DELAY
        self._flushing = False

    def __call__(self, plan: Plan) -> None:
        if self.error is not None:
            return
        self._plan = plan
        if not self._ready:
            self._prepare(plan)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write(plan)
            self._raise_unreported()
            return
        self._dirty = True
        if self._writer is None or self._writer.done():
            self._writer = loop.create_task(self._write_while_dirty())

    @property
    def saved_id(self) -> str | None:
        """The id the plan is saved under, once it is (None before, or when saving failed)."""
        return self.plan_id if self._ready and self.error is None else None

    async def discard(self) -> None:
        """Stops saving and removes the files of a plan whose id this recorder reserved (a new plan
        cancelled in review: nothing ran, nothing to resume). A resumed plan's files are kept."""
        owned = self._ready and self.error is None and not self._given_id
        self.error = ConfigError("the plan was discarded")  # later changes are not saved
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)
        if owned and self.plan_id is not None:
            with contextlib.suppress(OSError, ConfigError, UnsafeFile):
                await asyncio.to_thread(self.store.delete, self.plan_id)
        self.plan_id = None

    async def flush(self) -> None:
        self._flushing = True
        try:
            if self._hurry is not None:
                _settle(self._hurry)
            if self._dirty and self.error is None and (self._writer is None or self._writer.done()):
                self._writer = asyncio.get_running_loop().create_task(self._write_while_dirty())
            while self._writer is not None and not self._writer.done():
                await asyncio.shield(self._writer)
        finally:
            self._flushing = False
        self._raise_unreported()

    def _raise_unreported(self) -> None:
        error, self._unreported = self._unreported, None
        if error is not None:
            raise error

    def _prepare(self, plan: Plan) -> None:
        try:
            if self.plan_id is None:
                self.plan_id = self.store.new_id(plan.goal)
            else:
                self.store.check_folder()
        except (ConfigError, OSError) as error:
            self.error = _save_error(error)
            raise self.error from None
        self._ready = True

    def _render(self, plan: Plan) -> tuple[str, str, str]:
        assert self.plan_id is not None
        record = PlanRecord(
            id=self.plan_id,
            created_at=self.created_at,
            updated_at=time.time(),
            plan=plan,
            usage=self.usage(),
            failure=self.failure(),
            changes=self.changes(),
        )
        return self.plan_id, record.model_dump_json(indent=2), render_markdown(record)

    def _write(self, plan: Plan) -> None:
        try:
            self.store.write(*self._render(plan))
        except (ConfigError, OSError) as error:
            self.error = self._unreported = _save_error(error)

    async def _write_while_dirty(self) -> None:
        # Rendering the plan takes the loop for about a millisecond: first let the tasks the scheduler just
        # started send their requests (a few loop turns each; one turn was not enough, bench dispatch).
        # `flush` cuts the wait short: the plan's end does not wait for it.
        if not self._flushing:
            loop = asyncio.get_running_loop()
            hurry = self._hurry = loop.create_future()
            timer = loop.call_later(RENDER_DELAY, _settle, hurry)
            try:
                await hurry
            finally:
                timer.cancel()
        while self._dirty and self._plan is not None and self.error is None:
            self._dirty = False
            rendered = self._render(self._plan)
            try:
                await asyncio.to_thread(self.store.write, *rendered)
            except (ConfigError, OSError) as error:
                self.error = self._unreported = _save_error(error)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _save_error(error: ConfigError | OSError) -> ConfigError:
    if isinstance(error, ConfigError):
        return ConfigError(f"cannot save the plan: {error}")
    return ConfigError(f"cannot save the plan: {error.strerror or error}")
