"""Sorting listed files out before a search (regular, symlink, too large, gone), and the session's verdicts
on whether a large file rg reported is text: kept while the file is unchanged, asked again once it was
written, never kept for a file written a moment ago."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from paicli.tools.file_kinds import MAX_FILE_BYTES, TextVerdicts, select
from paicli.tools.grep_hits import FileHits
from paicli.tools.grep_search import RG_WHOLE_BYTES, rg_text_hits


def test_files_are_sorted_out_by_kind_and_size(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    (tmp_path / "big.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (tmp_path / "link.py").symlink_to("a.py")
    os.mkfifo(tmp_path / "pipe")
    chosen = select(tmp_path, ["a.py", "big.bin", "gone.py", "link.py", "pipe"])
    assert chosen.regular == ["a.py"] and chosen.links == ["link.py"]
    assert chosen.oversized == ["big.bin"] and chosen.too_large == 1


def hits_of(root: Path, verdicts: TextVerdicts) -> list[str]:
    found = {"large.py": FileHits("large.py", 1, [(1, "needle")]), "small.py": FileHits("small.py", 1, [(1, "n")])}
    return sorted(hit.path for hit in asyncio.run(rg_text_hits(root, found, verdicts)))


def test_a_large_files_verdict_stands_until_the_file_is_written(tmp_path: Path) -> None:
    (tmp_path / "large.py").write_bytes(b"needle\n" + b"x" * RG_WHOLE_BYTES + b"\n")
    (tmp_path / "small.py").write_bytes(b"n\n")
    verdicts = TextVerdicts(clock=lambda: time.time_ns() + 3 * 10**9)  # as if 3 s later: settled
    assert hits_of(tmp_path, verdicts) == ["large.py", "small.py"]
    assert list(verdicts._known.values()) == [True]
    with open(tmp_path / "large.py", "ab") as handle:  # in place, same size class: its ctime moves
        handle.write(b"\0")
    assert hits_of(tmp_path, verdicts) == ["small.py"]
    assert sorted(verdicts._known.values()) == [False, True]


def test_a_verdict_on_a_file_written_a_moment_ago_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "large.py").write_bytes(b"needle\n" + b"x" * RG_WHOLE_BYTES + b"\n")
    (tmp_path / "small.py").write_bytes(b"n\n")
    verdicts = TextVerdicts()
    assert hits_of(tmp_path, verdicts) == ["large.py", "small.py"]
    assert verdicts._known == {}
