"""The sandbox seam: what one command run needs contained (`Containment`), and a `Sandbox` that turns a
command's argv and environment into ones that run it contained.

One implementation today, bubblewrap (paicli/sandbox/bwrap.py); "none" is simply no sandbox: the tool
context carries `sandbox=None` and the command runs as the user. Which one a session uses is decided
once, at start-up (paicli/sandbox/choose.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Containment:
    """Where one command runs and what of the workspace it may write."""

    workspace: Path
    writable: tuple[str, ...] | None = None  # a plan task's declared files ("app.py", "tests/"); None: all of it


class Sandbox(Protocol):
    @property
    def name(self) -> str:
        """ "bwrap"."""
        ...

    @property
    def network(self) -> bool:
        """Whether commands reach the network."""
        ...

    def command(
        self, argv: Sequence[str], env: Mapping[str, str], containment: Containment
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that run `argv` contained. May create the folders a plan task
        declared (so they can be made writable); blocking, but only a few system calls."""
        ...

    def describe(self) -> str:
        """What a contained command may do, in a few words, for the banner, `/approval` and doctor."""
        ...
