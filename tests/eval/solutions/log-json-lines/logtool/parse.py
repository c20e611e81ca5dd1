"""Log lines: `2026-01-02T03:04:05 LEVEL message`, or JSON objects with ts, level and msg."""

import json
from dataclasses import dataclass
from datetime import datetime

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True)
class Entry:
    time: datetime
    level: str
    message: str
    format: str = "text"


def _json_entry(line: str) -> Entry:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"bad JSON: {err}") from None
    if not isinstance(data, dict) or not {"ts", "level", "msg"} <= set(data):
        raise ValueError("a JSON line needs ts, level and msg")
    level = str(data["level"]).upper()
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    return Entry(datetime.fromisoformat(data["ts"]), level, str(data["msg"]), "json")


def parse_line(line: str) -> Entry:
    line = line.rstrip("\n")
    if line.lstrip().startswith(("{", "[")):
        return _json_entry(line)
    parts = line.split(" ", 2)
    if len(parts) != 3:
        raise ValueError("not a log line")
    stamp, level, message = parts
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    return Entry(datetime.fromisoformat(stamp), level, message)


def parse_lines(lines):
    entries, bad = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entries.append(parse_line(line))
        except ValueError:
            bad.append(number)
    return entries, bad
