"""Telling a command that failed because of the sandbox from one that simply failed, by what it printed.

Only two signs are trusted: a write refused with EROFS ("Read-only file system": everything but the
workspace, and .git/ and .paicli/ inside it, is mounted read-only), and, without the network, the
messages of a name that does not resolve or an address that cannot be reached. Hidden secrets look like
missing files on purpose: they are never offered a way out.
"""

from __future__ import annotations

import re

_READ_ONLY = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve host|"
    r"name or service not known|name resolution|failed to resolve|getaddrinfo|\bENETUNREACH\b|\bEAI_AGAIN\b|"
    r"connection refused|failed to establish a new connection|unable to resolve host|no address associated",
    re.IGNORECASE,
)


# A declared file is bound alone: it can be written in place, not replaced (writable.py).
RENAMED_OVER = (
    "a declared file can only be written in place: a program that writes a new file and renames it over it "
    '(sed -i, many editors and formatters) needs its folder declared instead ("dir/" in "files")'
)


def blocked_by_sandbox(output: str, *, network: bool, writable: tuple[str, ...] | None = None) -> str | None:
    """Why `output` (of a command that exited non-zero inside the sandbox) looks like the sandbox's doing;
    None when it does not. `writable`: a plan task's declared files, when they limit its commands."""
    if refused := write_refused(output, writable):
        return refused
    if not network and _NO_NETWORK.search(output):
        return "a connection failed: the sandbox has no network"
    return None


def write_refused(output: str, writable: tuple[str, ...] | None = None) -> str | None:
    """Why `output` reports a write the sandbox refused (EROFS), None when it reports none. Also asked of a
    command that exited 0: `perl -i` says it could not edit the file, skips it and exits 0."""
    if _READ_ONLY.search(output):
        if writable is None:
            return (
                "a write was refused: only the workspace (but not its .git/ and .paicli/) and tool caches are writable"
            )
        if not writable:
            return (
                "a write was refused: this task declares no files, so in the sandbox its commands may write only "
                'tool caches; a task whose commands write (build folders such as target/ too) lists them in "files"'
            )
        where = f"only this task's declared files ({', '.join(writable)}) and tool caches are writable"
        if any(not path.endswith("/") for path in writable):
            return f"a write was refused: {where}; {RENAMED_OVER}"
        return f"a write was refused: {where}"
    return None
