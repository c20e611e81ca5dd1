"""Ending the process once paicli is done, without the interpreter's teardown.

When `main()` has returned, every file is closed and the model client with it; yet the interpreter still
unloads several hundred modules one by one before the process ends: 80 to 150 ms measured on a busy
2-core machine (bench/README.md, benchmark 6), paid by every headless command and every REPL exit, and a
quarter of what keeps a short plan from finishing in 0.6 × a ReAct run's time. `leave` skips that part
only: while any other non-daemon thread is still alive (a checkpoint being written, say) it exits the
ordinary way, which waits for it; otherwise it runs the `atexit` handlers, flushes stdout and stderr, and
ends the process at once.
"""

from __future__ import annotations

import atexit
import os
import sys

# Nothing more is imported at the top: a process started with secrets in its environment restarts at once
# (paicli/secret_handoff.py), and what it imported before is thrown away (typing and contextlib alone were
# about 5 ms of every such start). mypy reads TYPE_CHECKING as true whatever its value.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

ANSWERED_BEFORE_START = frozenset({"--version", "-h", "--help"})  # the command line answers these at once


def others_working() -> bool:
    """A non-daemon thread other than this one is alive: the interpreter would wait for it, so must we."""
    import threading

    current = threading.current_thread()
    return any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate())


def leave(code: int) -> NoReturn:
    import contextlib
    import threading

    if threading.current_thread() is not threading.main_thread() or others_working():
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away (`paicli … | head`)
            stream.flush()
    os._exit(code)


def entry() -> NoReturn:
    """The `paicli` command (pyproject's script) and `python -m paicli`. A process started with secrets in
    its environment restarts without them first thing (paicli/secret_handoff.py), before the command line
    and the rest of paicli are loaded only to be thrown away."""
    from paicli.common.errors import EXIT_USAGE
    from paicli.secret_handoff import HandoffError, restart_if_secrets

    try:
        if not ANSWERED_BEFORE_START.intersection(sys.argv[1:]):  # else main() restarts later, if it must
            restart_if_secrets()
    except HandoffError as error:
        print(f"paicli: {error}", file=sys.stderr)
        leave(EXIT_USAGE)
    from paicli.cli import main

    leave(main())
