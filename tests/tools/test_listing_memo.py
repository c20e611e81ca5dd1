"""grep_code's memo of the workspace's listing: kept while nothing it was made from changed, made again
after any change that could change it (each kind of change below, including those that change no folder:
a rule file edited in place, git's index, a linked worktree's index, the user's git config), never kept
when a stamp is too fresh to trust, nor outside git. After every change, what the memo gives is what a
fresh listing gives. Sizes change in place without a stamp: what is read is checked as it is read."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from paicli.tools import listing_memo
from paicli.tools.base import ToolContext
from paicli.tools.builtin.grep_code import GrepCode, GrepCodeArgs
from paicli.tools.git_listing import SharedGit
from paicli.tools.listing_memo import ListingMemo, Remembered
from tests.tools.test_file_lister import git, write


def later() -> int:
    return time.time_ns() + 3 * 10**9  # as if 3 s had passed: every stamp is settled


def view(memo: ListingMemo, root: Path) -> Remembered:
    remembered = memo.view(root, SharedGit(root))
    assert remembered is not None
    memo.settle()  # the stamps are taken in the background
    return remembered


def fresh(root: Path) -> Remembered:
    return view(ListingMemo(), root)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".gitconfig").write_text("[user]\n\tname = t\n")
    root = tmp_path / "ws"
    write(
        root,
        {
            ".gitignore": "build/\nout/\n*.log\n",
            "src/app.py": "app\n",
            "src/util.py": "util\n",
            "src/.gitignore": "gen/\n",
            "src/gen/made.py": "made\n",
            "build/keep.py": "tracked in an ignored folder\n",
            "build/old.py": "ignored\n",
            "out/x.py": "ignored\n",
            "run.log": "ignored\n",
        },
    )
    (root / "empty" / "a" / "b").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "add", "-f", "build/keep.py")
    write(root, {"notes.py": "untracked\n", "vendor/lib.py": "a nested repository\n"})
    git(root / "vendor", "init", "-q")
    return root


def test_a_listing_is_remembered_while_nothing_changes(repo: Path) -> None:
    memo = ListingMemo(clock=later)
    first = view(memo, repo)
    assert "src/app.py" in first.files and "build/keep.py" in first.files and "vendor/lib.py" in first.files
    assert not any(path.startswith(("out/", "src/gen/")) or path.endswith(".log") for path in first.files)
    assert view(memo, repo) == first == fresh(repo)
    assert memo.made == 1
    assert memo.ignored(repo) is not None and "out/" in (memo.ignored(repo) or [])


def test_a_listing_made_from_fresh_changes_is_not_kept(repo: Path) -> None:
    memo = ListingMemo()  # the real clock: the files were made a moment ago, within the same tick perhaps
    view(memo, repo)
    view(memo, repo)
    assert memo.made == 2


def symlink_over(root: Path) -> None:
    (root / "src" / "util.py").unlink()
    (root / "src" / "util.py").symlink_to("app.py")


def edit(path: str, text: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        with open(root / path, "r+") as handle:  # in place: no folder changes
            handle.seek(0, os.SEEK_END)
            handle.write(text)

    return change


CHANGES: dict[str, Callable[[Path], None]] = {
    "a new file at the top": lambda root: (root / "new.py").write_text("new\n"),
    "a new file deep down": lambda root: (root / "src" / "new.py").write_text("new\n"),
    "a file in a folder that was empty": lambda root: (root / "empty" / "a" / "b" / "new.py").write_text("n\n"),
    "a file deleted": lambda root: (root / "src" / "util.py").unlink(),
    "a file renamed": lambda root: (root / "src" / "util.py").rename(root / "src" / "tools.py"),
    "a file turned into a symlink": symlink_over,
    "a new file in a nested repository": lambda root: (root / "vendor" / "new.py").write_text("n\n"),
    "the .gitignore edited in place": edit(".gitignore", "notes.py\n"),
    "a deeper .gitignore edited in place": edit("src/.gitignore", "!gen/\n"),
    "info/exclude edited in place": edit(".git/info/exclude", "notes.py\n"),
    "a nested repository's exclude": edit("vendor/.git/info/exclude", "lib.py\n"),
    "an ignored file added to the index": lambda root: git(root, "add", "-f", "out/x.py"),
    "a tracked file taken out of the index": lambda root: git(root, "rm", "-q", "--cached", "build/keep.py"),
    ".paicliignore made": lambda root: (root / ".paicliignore").write_text("src/\n"),
    "a file made beside a tracked one in an ignored folder": lambda root: (root / "build" / "n.py").write_text(""),
    "the user's git config edited": lambda root: (root.parent / "home" / ".gitconfig").write_text(
        "[core]\n\texcludesFile = ~/ignore\n"
    ),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_every_change_that_could_change_the_listing_makes_it_again(repo: Path, change: str) -> None:
    memo = ListingMemo(clock=later)
    before = view(memo, repo)
    CHANGES[change](repo)
    after = view(memo, repo)
    assert memo.made == 2
    assert after == fresh(repo)
    if change not in ("a file made beside a tracked one in an ignored folder", "the user's git config edited"):
        assert after != before, "the change did not change the listing: the case shows nothing"


def test_a_file_in_a_wholly_ignored_folder_changes_nothing(repo: Path) -> None:
    memo = ListingMemo(clock=later)
    view(memo, repo)
    (repo / "out" / "more.py").write_text("ignored\n")
    (repo / "src" / "gen" / "more.py").write_text("ignored\n")
    view(memo, repo)
    assert memo.made == 1


def test_a_linked_worktrees_index_lives_elsewhere_and_is_stamped(repo: Path, tmp_path: Path) -> None:
    git(repo, "commit", "-qm", "c")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    (linked / "out" / "x.py").parent.mkdir()
    (linked / "out" / "x.py").write_text("ignored, then added\n")
    memo = ListingMemo(clock=later)
    before = view(memo, linked)
    assert (linked / ".git").is_file() and "out/x.py" not in before.files
    git(linked, "add", "-f", "out/x.py")  # only the index, in the main repository's .git/worktrees/linked
    after = view(memo, linked)
    assert memo.made == 2 and "out/x.py" in after.files and after == fresh(linked)


def test_outside_git_nothing_is_remembered(tmp_path: Path) -> None:
    write(tmp_path / "plain", {"a.py": "a\n"})
    assert ListingMemo(clock=later).view(tmp_path / "plain", SharedGit(tmp_path / "plain")) is None


def test_a_workspace_of_too_many_folders_is_listed_afresh(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing_memo, "MAX_STAMPS", 3)
    memo = ListingMemo(clock=later)
    view(memo, repo)
    view(memo, repo)
    assert memo.made == 2


def test_a_scope_takes_its_part_of_the_remembered_files(repo: Path) -> None:
    chosen = view(ListingMemo(clock=later), repo).selection(lambda path: path.startswith("src/"))
    assert chosen.regular == ["src/.gitignore", "src/app.py", "src/util.py"] and chosen.too_large == 0


@pytest.mark.parametrize("rg", [True, False], ids=["rg", "in process"])
def test_sizes_changed_in_place_are_checked_when_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch, rg: bool, tmp_path: Path
) -> None:
    """A file grown past 5 MB since the listing is not searched; one grown past rg's first buffer with a
    NUL byte at its end is binary: both are left out, as a fresh search leaves them out (the count of
    files too large is the listing's: 0)."""
    if not rg:
        bare = tmp_path / "bin"
        bare.mkdir()
        (bare / "git").symlink_to(shutil.which("git") or "git")
        monkeypatch.setenv("PATH", str(bare))
    elif shutil.which("rg") is None:
        pytest.skip("rg is not on PATH")
    write(repo, {"grow/big.py": "needle big\n", "grow/nul.py": "needle nul\n"})
    ctx = ToolContext(workspace=repo, listings=ListingMemo(clock=later))
    first = asyncio.run(GrepCode().run(GrepCodeArgs(pattern="needle"), ctx))
    assert ctx.listings is not None
    ctx.listings.settle()
    assert "grow/big.py" in first and "grow/nul.py" in first
    with open(repo / "grow" / "big.py", "a") as handle:
        handle.write("x" * (5 * 1024 * 1024) + "\nneedle again\n")
    with open(repo / "grow" / "nul.py", "a") as handle:
        handle.write("y" * 70_000 + "\0")
    again = asyncio.run(GrepCode().run(GrepCodeArgs(pattern="needle"), ctx))
    assert ctx.listings.made == 1
    assert again.startswith("no matches") and "larger than 5 MB" not in again


def test_a_warmed_memo_serves_the_first_search(repo: Path) -> None:
    memo = ListingMemo(clock=later)
    memo.warm(repo)
    memo.warm(repo)  # while one runs: no second listing
    memo.settle()
    assert memo.made == 1, "the warm-up made no listing"
    assert view(memo, repo) == fresh(repo)
    assert memo.made == 1, "the first search made the listing again"


def test_a_warm_up_makes_the_listing_again_only_when_it_changed(repo: Path) -> None:
    memo = ListingMemo(clock=later)
    memo.warm(repo)
    memo.settle()
    memo.warm(repo)
    memo.settle()
    assert memo.made == 1, "the listing was made again though nothing changed"
    (repo / "src" / "added.py").write_text("x = 1\n")
    memo.warm(repo)
    memo.settle()
    assert memo.made == 2, "the warm-up kept a listing that no longer holds"
    assert view(memo, repo) == fresh(repo) and "src/added.py" in fresh(repo).files
    assert memo.made == 2
