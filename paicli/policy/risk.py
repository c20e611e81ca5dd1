"""What the classifier says about a command: its risk, and the findings behind it."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Risk(enum.IntEnum):
    SAFE = 0
    ASK = 1
    OPAQUE = 2
    DENY = 3


@dataclass(frozen=True)
class Finding:
    """One reason a command is not SAFE."""

    risk: Risk
    reason: str
    words: tuple[str, ...] | None = None  # the simple command it is about (name normalised); None: not one
    prefix: str | None = None  # what "always" would allow ("git commit", "rm"); None: only this exact text
    destructive: bool = False  # it destroys work in the workspace (rm, git clean): asks even in the sandbox
    reads_outside: bool = False  # it reads outside the workspace, which reaches the model: asks even there


@dataclass(frozen=True)
class Classification:
    risk: Risk
    reason: str = ""  # the reason of the first finding with the highest risk
    findings: tuple[Finding, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()  # every simple command seen, wrappers kept, names normalised
    # What the classifier believes the command starts, in order of first appearance: every program (and
    # function) by name, and the builtins that run code (`eval`, `source`, `.`, `exec`, `command`, ...).
    # Complete for SAFE and ASK; for OPAQUE and DENY only what could be made out.
    programs: tuple[str, ...] = ()

    @property
    def asks(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.risk is Risk.ASK)

    @property
    def reads_outside(self) -> str | None:
        """Why it reads outside the workspace (policy/paths.py); None when it does not."""
        return next((f.reason for f in self.findings if f.reads_outside), None)

    @property
    def destructive(self) -> str | None:
        """Why it destroys work inside the workspace (policy/destructive.py); None when it does not."""
        return next((f.reason for f in self.findings if f.destructive), None)
