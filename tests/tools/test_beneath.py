"""beneath: walking a path below a root through folder handles, resolving symlinks without the kernel."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from paicli.tools.atomic import atomic_write
from paicli.tools.beneath import NotRegularFile, OutsideRoot, located, open_regular, stat_entry


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "real" / "deep").mkdir(parents=True)
    (folder / "real" / "f.txt").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return folder


def parts(root: Path, path: str, **kwargs: bool) -> tuple[str, ...]:
    with located(root, path, **kwargs) as spot:
        return spot.parts


def read(root: Path, path: str) -> str:
    with os.fdopen(open_regular(root, path), "rb") as handle:
        return handle.read().decode()


def test_plain_paths_and_dots(root: Path) -> None:
    assert parts(root, "real/f.txt") == ("real", "f.txt")
    assert parts(root, "./real/deep/../f.txt") == ("real", "f.txt")
    assert parts(root, "real/new.txt") == ("real", "new.txt")  # the last component need not exist
    assert parts(root, str(root / "real" / "f.txt")) == ("real", "f.txt")
    assert parts(root, ".") == () and parts(root, "real/..") == ()


def test_missing_folders_are_an_error_unless_created(root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        parts(root, "a/b/c.txt")
    assert parts(root, "a/b/c.txt", create_folders=True) == ("a", "b", "c.txt")
    assert (root / "a" / "b").is_dir()


def test_a_file_in_the_middle_is_not_a_folder(root: Path) -> None:
    with pytest.raises(NotADirectoryError):
        parts(root, "real/f.txt/x")


@pytest.mark.parametrize("target", ["real", "./real/deep/..", "ROOT/real"])
def test_symlinks_inside_are_resolved_here(root: Path, target: str) -> None:
    (root / "alias").symlink_to(target.replace("ROOT", str(root)), target_is_directory=True)
    assert parts(root, "alias/f.txt") == ("real", "f.txt")
    (root / "real" / "up").symlink_to("..")
    assert parts(root, "real/up/real/f.txt") == ("real", "f.txt")
    (root / "file-link").symlink_to("alias/f.txt")
    assert parts(root, "file-link") == ("real", "f.txt") and read(root, "file-link") == "inside"


def test_a_root_given_through_a_symlink_accepts_both_spellings(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "root-link"
    link.symlink_to(root, target_is_directory=True)
    assert parts(link, str(link / "real" / "f.txt")) == ("real", "f.txt")
    assert parts(link, str(root / "real" / "f.txt")) == ("real", "f.txt")
    (root / "abs").symlink_to(link / "real")
    assert parts(link, "abs/f.txt") == ("real", "f.txt")


@pytest.mark.parametrize("target", ["../outside", "ABS", "real/../../outside", "../root/../outside"])
def test_symlinks_out_are_refused(root: Path, target: str) -> None:
    outside = root.parent / "outside"
    (root / "out").symlink_to(str(outside) if target == "ABS" else target, target_is_directory=True)
    for path in ("out/secret.txt", "out/new.txt", "out", "real/../out/x"):
        with pytest.raises(OutsideRoot, match="outside the workspace"):
            parts(root, path, create_folders=True)
    assert sorted(os.listdir(outside)) == ["secret.txt"]


@pytest.mark.parametrize("path", ["..", "../root/real/f.txt", "real/../../x", "/etc/passwd"])
def test_leaving_the_root_by_name_is_refused(root: Path, path: str) -> None:
    with pytest.raises(OutsideRoot):
        parts(root, path)


def test_a_symlink_loop_ends_with_eloop(root: Path) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    with pytest.raises(OSError) as caught:
        parts(root, "a/x")
    assert caught.value.errno == errno.ELOOP


def test_a_dangling_link_inside_names_what_a_write_creates(root: Path) -> None:
    (root / "later").symlink_to("real/created.txt")
    assert parts(root, "later") == ("real", "created.txt")
    atomic_write(Path("later"), "made", root=root)
    assert (root / "real" / "created.txt").read_text() == "made" and (root / "later").is_symlink()


def test_opening_refuses_folders_and_special_files_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(NotRegularFile):
        open_regular(root, "pipe")
    with pytest.raises(IsADirectoryError):
        open_regular(root, "real")
    with pytest.raises(IsADirectoryError):
        open_regular(root, ".")
    with pytest.raises(FileNotFoundError):
        open_regular(root, "real/missing.txt")


def test_stat_entry(root: Path) -> None:
    assert stat_entry(root, "missing") is None and stat_entry(root, "nope/missing") is None
    info = stat_entry(root, "real/f.txt")
    assert info is not None and info.st_size == len("inside")


def test_atomic_write_below_a_root_never_writes_outside(root: Path) -> None:
    (root / "out").symlink_to("../outside", target_is_directory=True)
    with pytest.raises(OutsideRoot):
        atomic_write(root / "out" / "secret.txt", "overwritten", root=root)
    with pytest.raises(OutsideRoot):
        atomic_write(Path("out/new/deeper.txt"), "x", root=root)
    assert sorted(os.listdir(root.parent / "outside")) == ["secret.txt"]
    assert (root.parent / "outside" / "secret.txt").read_text() == "secret"
