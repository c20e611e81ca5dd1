"""What servers were found not to support, remembered across runs in `~/.paicli/capabilities.json`.

One entry per server and model, keyed by the base URL (without any user:password part) and the model
name, with the time it was last written; an entry older than `max_age` (30 days) is ignored, since
servers get upgraded. The file is small and bounded (at most `MAX_ENTRIES` entries, the oldest dropped;
read only up to 1 MB), written atomically (temp file + rename, mode 0600), and a file that cannot be
read or parsed counts as empty: forgetting costs one rejected request, never a failure.
`paicli doctor --refresh` clears it.

An entry also keeps what plan tasks of each type actually cost on that server and model against what the
estimate said (`calibration`: per task type, the latest `MAX_SAMPLES` samples of estimated and used
requests and prompt tokens), so the next plan's estimate is calibrated from them (paicli/plan/calibration.py).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from paicli.common.atomic_write import write_path

MAX_AGE = 30 * 24 * 3600.0
MAX_ENTRIES = 200
MAX_BYTES = 1_000_000
MAX_SAMPLES = 20  # per task type: the latest ones
MAX_KIND = 32  # characters of a task type's name
Sample = tuple[int, int, int, int]  # estimated requests, used requests, estimated prompt tokens, used ones
FILE_NAME = "capabilities.json"


@dataclass
class Learned:
    """What is known of one server and model."""

    rejected: set[str] = field(default_factory=set)
    plan_format: int | None = None  # the planner's structured-output mode that worked
    updated: float | None = None  # when it was last written (Unix seconds); None: never stored
    calibration: dict[str, list[Sample]] = field(default_factory=dict)  # task type → its latest samples

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"rejected": sorted(self.rejected), "plan_format": self.plan_format}
        if self.calibration:
            data["calibration"] = {kind: [list(s) for s in samples] for kind, samples in self.calibration.items()}
        return {**data, "updated": self.updated}


def endpoint_key(base_url: str, model: str) -> str:
    """`https://api.example.com/v1 model`: the base URL without credentials, query or trailing slash."""
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        url = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    except ValueError:
        url = base_url.strip().rstrip("/")
    return f"{url} {model}"


class CapabilityStore:
    def __init__(self, path: Path, *, max_age: float = MAX_AGE, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.max_age = max_age
        self.clock = clock

    def load(self, base_url: str, model: str) -> Learned | None:
        entry = self._read().get(endpoint_key(base_url, model))
        return _learned(entry, self.clock() - self.max_age) if entry is not None else None

    def save(self, base_url: str, model: str, learned: Learned) -> None:
        """Writes one entry (stamped now); a failure to write is ignored (the knowledge stays in memory)."""
        learned.updated = self.clock()
        entries = self._read()
        entries[endpoint_key(base_url, model)] = learned.to_json()
        newest = sorted(entries.items(), key=lambda item: _stamp(item[1]), reverse=True)[:MAX_ENTRIES]
        with contextlib.suppress(OSError):
            self._write({"version": 1, "entries": dict(newest)})

    def clear(self) -> bool:
        """Forgets everything; True if there was something to forget."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def _read(self) -> dict[str, Any]:
        try:
            with self.path.open("rb") as file:
                raw = file.read(MAX_BYTES + 1)
        except OSError:
            return {}
        if len(raw) > MAX_BYTES:
            return {}
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        return {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        write_path(self.path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"), mode=0o600)


def _learned(entry: dict[str, Any], oldest: float) -> Learned | None:
    updated = _stamp(entry)
    if updated < oldest:
        return None
    rejected = entry.get("rejected")
    plan_format = entry.get("plan_format")
    return Learned(
        rejected={r for r in rejected if isinstance(r, str)} if isinstance(rejected, list) else set(),
        plan_format=plan_format if isinstance(plan_format, int) and 0 <= plan_format < 8 else None,
        updated=updated,
        calibration=_calibration(entry.get("calibration")),
    )


def _calibration(value: object) -> dict[str, list[Sample]]:
    """The samples as written, each four counts that are not negative; anything else is left out."""
    if not isinstance(value, dict):
        return {}
    found: dict[str, list[Sample]] = {}
    for kind, samples in list(value.items())[:MAX_KIND]:
        if not isinstance(kind, str) or len(kind) > MAX_KIND or not isinstance(samples, list):
            continue
        kept = [
            (s[0], s[1], s[2], s[3])
            for s in samples[-MAX_SAMPLES:]
            if isinstance(s, list)
            and len(s) == 4
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 10**9 for n in s)
        ]
        if kept:
            found[kind] = kept
    return found


def _stamp(entry: dict[str, Any]) -> float:
    value = entry.get("updated")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
