"""The prompt's history file: prompt_toolkit's format, loaded and kept within its cap."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pexpect
import pytest
from prompt_toolkit.history import FileHistory

from paicli.ui.prompt.history import MAX_ENTRIES, CappedFileHistory, history_file, history_path
from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, Spawn, expect_text


def write_entries(path: Path, texts: list[str]) -> None:
    """The entries as prompt_toolkit itself stores them (a dated header, each line prefixed with "+")."""
    plain = FileHistory(str(path))
    for text in texts:
        plain.store_string(text)


def test_a_history_under_its_cap_loads_whole_newest_first_and_the_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history"
    write_entries(path, ["first", "two\nlines", "", "last"])
    before = path.read_bytes()
    loaded = list(CappedFileHistory(str(path)).load_history_strings())
    assert loaded == list(FileHistory(str(path)).load_history_strings()) == ["last", "", "two\nlines", "first"]
    assert path.read_bytes() == before


def test_only_the_newest_entries_are_loaded(tmp_path: Path) -> None:
    path = tmp_path / "history"
    write_entries(path, [f"entry {i}" for i in range(20)])
    loaded = list(CappedFileHistory(str(path), max_entries=10).load_history_strings())
    assert loaded == [f"entry {i}" for i in range(19, 9, -1)]
    assert len(list(FileHistory(str(path)).load_history_strings())) == 20  # not over twice the cap: file kept


def test_a_file_of_twice_the_cap_is_cut_to_what_is_loaded_with_its_headers_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "history"
    write_entries(path, [f"entry {i}\nsecond line" for i in range(21)])
    os.chmod(path, 0o600)
    header = path.read_text().splitlines()[-3]  # the last entry's "# <date>" line
    loaded = list(CappedFileHistory(str(path), max_entries=10).load_history_strings())
    assert loaded[0] == "entry 20\nsecond line"
    kept = list(FileHistory(str(path)).load_history_strings())
    assert kept == [f"entry {i}\nsecond line" for i in range(20, 10, -1)]
    assert header.startswith("# ") and header in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["history"]  # no temporary file left
    CappedFileHistory(str(path), max_entries=10).store_string("after the cut")
    assert list(FileHistory(str(path)).load_history_strings())[:2] == ["after the cut", "entry 20\nsecond line"]


def test_large_pastes_count_against_a_cap_on_characters(tmp_path: Path) -> None:
    path = tmp_path / "history"
    write_entries(path, ["small", "x" * 600, "y" * 300, "latest"])
    loaded = list(CappedFileHistory(str(path), max_chars=800).load_history_strings())
    assert loaded == ["latest", "y" * 300]  # with the 600-character paste they would pass 800


def test_a_paste_larger_than_the_whole_cap_is_dropped_not_the_history_before_it(tmp_path: Path) -> None:
    path = tmp_path / "history"
    write_entries(path, ["first", "second", "x" * 900, "latest"])
    loaded = list(CappedFileHistory(str(path), max_chars=400).load_history_strings())
    assert loaded == ["latest", "second", "first"]
    assert list(FileHistory(str(path)).load_history_strings()) == loaded  # over twice the cap: cut, paste gone


def test_a_missing_or_unreadable_file_is_an_empty_history(tmp_path: Path) -> None:
    assert list(CappedFileHistory(str(tmp_path / "none")).load_history_strings()) == []
    (tmp_path / "folder").mkdir()
    assert list(CappedFileHistory(str(tmp_path / "folder")).load_history_strings()) == []


def test_the_workspace_history_is_capped(tmp_path: Path) -> None:
    history = history_file(tmp_path / "home", tmp_path)
    assert isinstance(history, CappedFileHistory)
    assert history.filename == str(history_path(tmp_path / "home", tmp_path))


@pytest.mark.pty
def test_the_repl_loads_a_long_history_capped_and_cuts_its_file(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path, home: Path
) -> None:
    path = history_path(home, workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"\n# 2026-11-30 10:00:00\n+line {i}\n" for i in range(2 * MAX_ENTRIES + 1)))
    fake.on("", Reply.text("Again."), repeat=True)
    child = spawn_repl()
    child.send("\x1b[A\r")  # Up, Enter: the newest entry is sent
    expect_text(child, "Again.")
    assert fake.requests[-1].messages[-1]["content"] == f"line {2 * MAX_ENTRIES}"
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    kept = list(FileHistory(str(path)).load_history_strings())
    # Cut to the newest MAX_ENTRIES; the line sent again is not stored twice in a row (prompt_toolkit's rule).
    assert len(kept) == MAX_ENTRIES
    assert (kept[0], kept[-1]) == (f"line {2 * MAX_ENTRIES}", f"line {MAX_ENTRIES + 1}")
