"""Atomic writes: the file is the old one or the new one, never half written, and no temp is left."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from paicli.tools import atomic
from paicli.tools.atomic import atomic_write


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".paicli-tmp"))


def test_writes_text_and_bytes(tmp_path: Path) -> None:
    atomic_write(tmp_path / "a.txt", "héllo\n")
    atomic_write(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert leftovers(tmp_path) == []


def test_creates_missing_parent_folders(tmp_path: Path) -> None:
    atomic_write(tmp_path / "x" / "y" / "z.txt", "deep")
    assert (tmp_path / "x" / "y" / "z.txt").read_text() == "deep"


def test_new_file_gets_0644_minus_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_replacing_keeps_the_mode_bits(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o751)
    atomic_write(script, "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text().endswith("echo hi\n")


def test_encoding_failure_leaves_the_original_untouched(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "snowman ☃", encoding="ascii")
    assert target.read_text() == "original"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [OSError("disk on fire"), KeyboardInterrupt()])
def test_failure_during_fsync_removes_the_temp_and_keeps_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original")

    def broken_fsync(fd: int) -> None:
        raise failure

    monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
    with pytest.raises(type(failure)):
        atomic_write(target, "new content that must not appear")
    assert target.read_text() == "original"
    assert leftovers(tmp_path) == []


def test_failure_at_rename_removes_the_temp_and_keeps_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original")

    def broken_replace(src: object, dst: object, **dir_fds: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="rename failed"):
        atomic_write(target, "new")
    assert target.read_text() == "original"
    assert leftovers(tmp_path) == []


def test_long_file_names_still_get_a_temp_name_that_fits(tmp_path: Path) -> None:
    name = "n" * 250
    atomic_write(tmp_path / name, "x")
    assert (tmp_path / name).read_text() == "x"
