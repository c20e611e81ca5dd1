"""results.jsonl: a record per line, read back for resuming; a line cut off by a crash is skipped (its run
runs again) and the next record starts on a line of its own."""

from __future__ import annotations

from pathlib import Path

from paicli.eval.records import RunRecord
from paicli.eval.results import ResultsFile, done_keys, recorded


def record(task: str) -> RunRecord:
    return RunRecord(suite="s", task=task, mode="chat", model="m", repeat=0, outcome="pass")


def test_records_are_read_back_and_a_cut_line_is_skipped(tmp_path: Path) -> None:
    ResultsFile(tmp_path).append(record("a"))
    with (tmp_path / "results.jsonl").open("a") as handle:
        handle.write('{"suite": "s", "task": "b", "mo')  # a crash mid-line
    ResultsFile(tmp_path).append(record("c"))
    records, bad = recorded(tmp_path)
    assert [r.task for r in records] == ["a", "c"] and bad == 1
    assert done_keys(records) == {record("a").key(), record("c").key()}


def test_no_folder_means_nothing_recorded(tmp_path: Path) -> None:
    assert recorded(tmp_path / "none") == ([], 0)
