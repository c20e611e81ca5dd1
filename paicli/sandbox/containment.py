"""The sandbox seam: what one command run needs contained (`Containment`), and a `Sandbox` that turns a
command's argv and environment into ones that run it contained.

One implementation today, bubblewrap (paicli/sandbox/bwrap.py); "none" is simply no sandbox: the tool
context carries `sandbox=None` and the command runs as the user. Which one a session uses is decided
once, at start-up (paicli/sandbox/choose.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from paicli.sandbox.gitdirs import GitPaths
from paicli.sandbox.placeholder import Placeholder

__all__ = ["Containment", "Placeholder", "Sandbox"]


@dataclass(frozen=True)
class Containment:
    """Where one command runs and what of the workspace it may write."""

    workspace: Path
    # A plan task's declared files ("app.py", "tests/"); (): none, the workspace read-only but for tool
    # caches; None: all of it.
    writable: tuple[str, ...] | None = None
    # What the sandbox created so a declared path could be made writable (an empty file for a new one, its
    # missing folders), to be taken away again when the command wrote nothing there (`release`).
    placeholders: list[Placeholder] = field(default_factory=list, compare=False)
    # The workspace's git-controlled paths as found just before the command (gitdirs.py), so the sandbox
    # need not walk the workspace again; None: it walks it itself.
    git_paths: GitPaths | None = field(default=None, compare=False)

    def release(self) -> None:
        """Removes each placeholder the command left as it was made (an empty file, an empty folder)."""
        for placeholder in reversed(self.placeholders):
            placeholder.remove_if_unused()
        self.placeholders.clear()


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

    def with_status(self, argv: Sequence[str], fd: int) -> list[str] | None:
        """`argv` as `command` built it, made to write the sandbox's status to the descriptor `fd`: bwrap's
        `--json-status-fd` JSON lines, one with "exit-code" only once the command itself has run
        (paicli/sandbox/launch.py); None when this sandbox cannot tell."""
        ...

    def describe(self) -> str:
        """What a contained command may do, in a few words, for the banner, `/approval` and doctor."""
        ...
