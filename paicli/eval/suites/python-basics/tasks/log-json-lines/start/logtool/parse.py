"""Log lines: `2026-01-02T03:04:05 LEVEL message`."""

from dataclasses import dataclass
from datetime import datetime

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True)
class Entry:
    time: datetime
    level: str
    message: str


def parse_line(line: str) -> Entry:
    stamp, level, message = line.rstrip("\n").split(" ", 2)
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    return Entry(datetime.fromisoformat(stamp), level, message)
