"""Parsing untrusted replies off the event loop, so ESC, Ctrl-C and SIGTERM never wait for a parse.

The parsers are bounded (see `paicli.plan.jsonscan`), but a megabyte of hostile text can still take a
good part of a second of pure Python. Run on the loop, that second is a second in which no key is read
and no signal handled. So the parse runs in a thread of its own and the loop awaits a future: a cancel
returns at once.

Why not `asyncio.to_thread`: its executor's threads are joined when `asyncio.run` ends, so a cancelled
parse would still hold up the exit after SIGTERM until it finished. This thread is a daemon and nobody
joins it; a result that arrives after a cancel is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def off_loop(work: Callable[[], T], *, name: str = "paicli-parse") -> T:
    """`work()` run in a daemon thread; its result or its exception, or CancelledError at once."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(outcome: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            loop.call_soon_threadsafe(outcome)

    def run() -> None:
        try:
            result = work()
        except BaseException as error:  # delivered to the awaiting task, which decides what it means
            caught = error
            deliver(lambda: None if future.done() else future.set_exception(caught))
        else:
            deliver(lambda: None if future.done() else future.set_result(result))

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future
