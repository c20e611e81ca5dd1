"""The planner's replies as they stream: `plan_task_streamed` for each task whose object is complete, and
the tasks handed to a listener (early start, paicli/plan/early.py).

One `PlanStream` serves one planning conversation (a request and its re-asks). Each reply is an attempt:
the first request's reply is attempt 1; a reply that broke off and is asked again (the client's
`on_restart`) or a re-ask after a rejected plan starts the next one, announced by `reply_restarted`
(task_id null) and `listener.restart()`, and its tasks replace the earlier attempt's. A request that
streamed nothing (refused before it started, e.g. a `response_format` fallback) starts no new attempt.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Protocol

from paicli.common.events import EventSink, PlanTaskStreamed, ReplyRestarted
from paicli.plan.model import Task
from paicli.plan.stream_parse import StreamParser


class StreamListener(Protocol):
    """Who else wants the tasks of a reply as they stream."""

    def task(self, task: Task) -> None: ...  # a task whose object in the reply is complete
    def restart(self) -> None: ...  # a new reply begins: what the earlier one streamed is void unless repeated


class PlanStream:
    def __init__(
        self,
        sink: EventSink,
        *,
        round: int = 1,
        external: Collection[str] = (),
        max_tasks: int = 50,
        listener: StreamListener | None = None,
    ) -> None:
        self.sink = sink
        self.round = round
        self.external = frozenset(external)
        self.max_tasks = max_tasks
        self.listener = listener
        self.attempt = 1
        self.parser = self._parser()
        self.since = time.monotonic()

    def begin(self) -> None:
        """A reply is about to stream: a request goes out, or one that broke off is asked again."""
        if self.parser.chars:
            self.attempt += 1
            self.sink.emit(ReplyRestarted(task_id=None))
            if self.listener is not None:
                self.listener.restart()
            self.parser = self._parser()
        self.since = time.monotonic()

    def feed(self, text: str) -> None:
        """The client's `on_text`: a piece of the reply's content."""
        for task in self.parser.feed(text):
            self.sink.emit(
                PlanTaskStreamed(
                    round=self.round,
                    task=task.view(),
                    attempt=self.attempt,
                    tokens=self.parser.tokens,
                    elapsed=round(time.monotonic() - self.since, 3),
                )
            )
            if self.listener is not None:
                self.listener.task(task)

    def _parser(self) -> StreamParser:
        return StreamParser(round=self.round, external_ids=self.external, max_tasks=self.max_tasks)
