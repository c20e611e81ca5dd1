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


@dataclass(frozen=True)
class Classification:
    risk: Risk
    reason: str = ""  # the reason of the first finding with the highest risk
    findings: tuple[Finding, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()  # every simple command seen, wrappers kept, names normalised

    @property
    def asks(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.risk is Risk.ASK)
