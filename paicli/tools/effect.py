"""What running a tool can change: a fact every tool states (paicli/tools/base.py)."""

from __future__ import annotations

import enum


class Effect(enum.Enum):
    """What running a tool can change. Unknown tools count as EXECUTE (anything may happen)."""

    READ = "read"  # nothing: reads files or lists them
    WRITE = "write"  # the files named by its path argument
    EXECUTE = "execute"  # anything: runs programs, or acts outside paicli's view (MCP)
    NETWORK = "network"  # nothing here: reads from the network (fetch_url), judged by host
