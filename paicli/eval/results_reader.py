"""Reading the run records of one or more output folders (DIR/results.jsonl), shards merged.

A folder's records are read line by line; a line that is empty, not JSON or not a run record becomes a
one-line problem naming the file and the line, and the rest is still read. A run key (suite, task, mode,
model, repeat) seen twice keeps the record read last: folders in the order given, lines in file order (a
resumed run that redid a run appends its newer record)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from paicli.common.sanitize import one_line
from paicli.eval.records import RunKey, RunRecord

RESULTS_NAME = "results.jsonl"
MAX_LINE_BYTES = 1_000_000  # a record is a few kilobytes (the check's tail is bounded); more is not ours


@dataclass
class ReadResults:
    records: list[RunRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each, safe for a terminal


def _why_invalid(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    return f"{where}: {first['msg']}" + (f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else "")


def _parse_line(raw: bytes) -> RunRecord | str:
    """The record on one line, or why there is none."""
    if len(raw) > MAX_LINE_BYTES:
        return f"line longer than {MAX_LINE_BYTES} bytes"
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return "empty line"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return f"not JSON ({err.msg} at column {err.colno})"
    if not isinstance(data, dict):
        return "not a JSON object"
    try:
        return RunRecord.model_validate(data)
    except ValidationError as err:
        return f"not a run record: {_why_invalid(err)}"


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The file's lines, each cut after MAX_LINE_BYTES + 1 bytes (the rest of a longer line is skipped
    without holding it in memory)."""
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
        yield raw


def read_results(dirs: list[Path]) -> ReadResults:
    kept: dict[RunKey, RunRecord] = {}
    result = ReadResults()
    for folder in dirs:
        path = folder / RESULTS_NAME
        try:
            handle = path.open("rb")
        except OSError as err:
            result.problems.append(one_line(f"{path}: cannot read ({err.strerror or err})", 300))
            continue
        with handle:
            for number, raw in enumerate(_lines(handle), start=1):
                parsed = _parse_line(raw)
                if isinstance(parsed, str):
                    result.problems.append(one_line(f"{path}:{number}: {parsed}", 300))
                    continue
                key = parsed.key()
                kept.pop(key, None)  # re-inserted: the dict's order is that of the records kept
                kept[key] = parsed
    result.records = list(kept.values())
    return result
