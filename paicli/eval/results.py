"""DIR/results.jsonl: one RunRecord per finished run, appended and flushed (and fsynced) at once, so a run
that finished is kept whatever happens next; reading it back gives the keys a rerun skips."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import ValidationError

from paicli.eval.records import RunKey, RunRecord

RESULTS = "results.jsonl"


def recorded(folder: Path) -> tuple[list[RunRecord], int]:
    """The records in `folder`'s results file, and how many lines could not be read (a line cut off by a
    crash, a hand edit): those are skipped, so their runs run again."""
    path = folder / RESULTS
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], 0
    records, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            records.append(RunRecord.model_validate_json(line))
        except ValidationError:
            bad += 1
    return records, bad


def done_keys(records: list[RunRecord]) -> set[RunKey]:
    return {record.key() for record in records}


class ResultsFile:
    """Appends records to `folder`/results.jsonl, from any thread or task, one whole line at a time."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / RESULTS
        self._lock = threading.Lock()
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as handle:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":  # a line cut off by a crash: the next record starts on its own line
                    with self.path.open("ab") as out:
                        out.write(b"\n")

    def append(self, record: RunRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
