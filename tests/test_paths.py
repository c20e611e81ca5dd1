"""The one path normaliser (paicli/common/paths.py): its normal form, and names compared as the
workspace's filesystem compares them."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from paicli.common.paths import Names, declared_problem, normalise

NORMAL_FORMS = {
    "a.txt": "a.txt",
    "./a.txt": "a.txt",
    " ./a.txt ": "a.txt",
    "sub/../a.txt": "a.txt",
    "sub//x": "sub/x",
    "./sub/./x": "sub/x",
    "./sub/": "sub/",
    "sub/.": "sub/",
    "sub/deeper/..": "sub/",
    ".": "./",
    "./": "./",
    "a/b/../../": "./",
    "..": "../",
    "../x": "../x",
    "//etc/x": "/etc/x",
}


@pytest.mark.parametrize("text", list(NORMAL_FORMS))
def test_every_spelling_has_one_normal_form(text: str) -> None:
    assert normalise(text) == NORMAL_FORMS[text]
    assert normalise(NORMAL_FORMS[text]) == NORMAL_FORMS[text]  # normal forms stay as they are


def test_blank_and_undeclarable_paths() -> None:
    assert normalise("  ") is None
    assert declared_problem("src/*.py") == "has the pattern 'src/*.py' in \"files\"; name paths or folders, no globs"
    for outside in ("../", "../x", "/etc/passwd"):
        assert declared_problem(outside) == f"declares {outside!r}, which is outside the workspace; use relative paths"
    assert declared_problem('it\'s "quoted".txt') is None


def test_the_probe_finds_how_this_filesystem_compares_names(tmp_path: Path) -> None:
    names = Names.of(tmp_path)
    (tmp_path / "README.md").write_text("x")
    assert names.case_insensitive == (tmp_path / "readme.md").exists()
    nfc = unicodedata.normalize("NFC", "café.txt")
    (tmp_path / nfc).write_text("x")
    assert names.unicode_insensitive == (tmp_path / unicodedata.normalize("NFD", nfc)).exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".paicli")] == []  # the probe is gone


def test_keys_fold_what_the_filesystem_folds() -> None:
    nfd = unicodedata.normalize("NFD", "café/menu.txt")
    nfc = unicodedata.normalize("NFC", nfd)
    assert not Names().same("README.md", "readme.md") and not Names().same(nfc, nfd)
    assert Names(case_insensitive=True).same("README.md", "readme.md")
    assert Names(unicode_insensitive=True).same(nfc, nfd)
    folding = Names(case_insensitive=True, unicode_insensitive=True)
    assert folding.covers("CAFÉ/", nfd) and folding.covers("./", "anything")
    assert not folding.covers("caf", nfd) and not Names().covers("src", "src/a.py")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_workspace_that_cannot_be_probed_is_taken_to_fold_both(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert Names.of(folder) == Names(case_insensitive=True, unicode_insensitive=True)
    finally:
        folder.chmod(0o755)
