"""rg's walk gives the same hits as the search in process on a git repository whose rules rg does not
read the way git does: nested .gitignore files, negations, .git/info/exclude, a global excludes file,
.paicliignore, untracked files, a tracked file in an ignored folder, a nested repository and a submodule,
symlinks out of the workspace, names a glob would misread, and the parity corpus of grep_search (large
files, NUL beyond rg's first buffer, names with a line break, caps). And a name with a line break cannot
make rg's output put words in another file's mouth."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

import pytest

from paicli.tools.builtin.grep_code import _in_scope
from paicli.tools.file_kinds import Selection, select
from paicli.tools.file_lister import all_files, list_files
from paicli.tools.git_listing import SharedGit
from paicli.tools.grep_search import RG_ONE_THREAD, rg_threads
from paicli.tools.grep_walk import Scope, _missed, _plain_excludes, search_tree
from paicli.tools.listing_memo import ListingMemo
from paicli.tools.regex_syntax import compile_pattern
from tests.tools.builtin.test_grep_parity import CORPUS, PATTERNS
from tests.tools.test_file_lister import git

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="rg is not on PATH: only the in-process engine can run here")


def write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


RULES: dict[str, bytes] = {
    ".gitignore": b"build/\n*.log\n.env\ngen/*\n!gen/keep.py\nweird[[]1]/\n",
    ".env": b"handler = secret\n",
    "build/out.py": b"def handler_test(): pass\n",
    "gen/made.py": b"handler made\n",
    "gen/keep.py": b"handler kept by a negation\n",
    "src/debug.log": b"handler in a log\n",
    "src/.gitignore": b"cache/\n!important.log\n",
    "src/important.log": b"handler important\n",
    "src/cache/c.py": b"handler cached\n",
    "local/only-here.txt": b"handler excluded by info/exclude\n",
    "notes.swp": b"handler excluded globally\n",
    "untracked/new.py": b"handler untracked, not ignored\n",
    "secret/key.txt": b"handler hidden by .paicliignore\n",
    ".paicliignore": b"secret/\n",
    "tracked-ignored/.gitkeep": b"",
    "weird[1]/w.py": b"handler in a folder whose name is a glob\n",
    "sp ace/a b.py": b"handler with spaces\n",
    "q\nsrc/app.py": b"handler forged\n",
}
NESTED: dict[str, bytes] = {
    "lib.py": b"handler in a nested repository\n",
    ".gitignore": b"*.tmp\n",
    "x.tmp": b"handler ignored inside the nested repository\n",
    "x.log": b"handler: a log the parent ignores, listed by the nested repository\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The repository (made once: a submodule and commits take seconds here) and its global git config."""
    tmp_path = tmp_path_factory.mktemp("walk")
    workspace = tmp_path / "ws"
    excludes = tmp_path / "global-excludes"
    excludes.write_text("*.swp\n")
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GIT_CONFIG_GLOBAL", str(config))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        make_repository(workspace, tmp_path)
    return workspace, config


@pytest.fixture
def repo(built: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace, config = built
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))  # the global excludes file: core.excludesFile
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return workspace


def make_repository(workspace: Path, tmp_path: Path) -> None:
    write(workspace, CORPUS | RULES)
    (workspace / "link.py").symlink_to("src/app.py")
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.py").write_bytes(b"handler outside the workspace\n")
    (outside / "dir" / "more.py").write_bytes(b"handler outside, in a folder\n")
    (workspace / "out.py").symlink_to(outside / "secret.py")
    (workspace / "outdir").symlink_to(outside / "dir")
    os.mkfifo(workspace / "fifo")
    git(workspace, "init", "-q")
    (workspace / ".git" / "info" / "exclude").write_text("local/\n")
    (workspace / "tracked-ignored" / "t.log").write_bytes(b"handler tracked although ignored\n")
    (workspace / "build" / "keep.py").write_bytes(b"handler tracked in an ignored folder\n")
    git(workspace, "add", "-A")
    git(workspace, "add", "-f", "tracked-ignored/t.log", "build/keep.py")
    submodule = tmp_path / "submodule-origin"
    write(submodule, {"sub.py": b"handler in a submodule\n", ".gitignore": b"*.out\n"})
    git(submodule, "init", "-q")
    git(submodule, "add", "-A")
    git(submodule, "commit", "-qm", "s")
    git(workspace, "submodule", "add", "-q", str(submodule), "modules/sub")
    (workspace / "modules" / "sub" / "x.out").write_bytes(b"handler ignored in the submodule\n")
    git(workspace, "commit", "-qm", "c")
    write(workspace / "vendor", NESTED)  # a repository inside, untracked
    git(workspace / "vendor", "init", "-q")
    git(workspace / "vendor", "add", "lib.py")
    git(workspace / "vendor", "commit", "-qm", "v")


def chooser(root: Path, scope: Scope):  # type: ignore[no-untyped-def]
    def choose() -> Selection:
        keep = _in_scope(scope.folder or ".", True, scope.glob)
        listed = all_files(root) if scope.include_ignored else list_files(root, worktree=False).files
        return select(root, [path for path in listed if keep(path)])

    return choose


async def both(root: Path, scope: Scope, pattern: str) -> tuple[list[str], list[str]]:
    compiled = compile_pattern(pattern)
    walked = await search_tree(root, scope, chooser(root, scope), compiled, 20, RG)
    here = await search_tree(root, scope, chooser(root, scope), compiled, 20, None)
    assert here.engine == "re2"
    assert walked.engine == "rg walk", "rg did not walk: the parity is not shown"
    assert walked.too_large == here.too_large
    assert walked.hits == here.hits
    return [hit.path for hit in walked.hits], [hit.path for hit in here.hits]


@needs_rg
async def test_the_walk_finds_what_git_lists_and_nothing_else(repo: Path) -> None:
    found, _ = await both(repo, Scope(), "handler")
    assert "gen/keep.py" in found and "src/important.log" in found  # negations
    assert "untracked/new.py" in found and "tracked-ignored/t.log" in found and "build/keep.py" in found
    assert "vendor/lib.py" in found and "vendor/x.log" in found and "modules/sub/sub.py" in found
    assert "weird[1]/w.py" not in found and "sp ace/a b.py" in found
    assert "link.py" in found and "q\nsrc/app.py" in found
    for left_out in (
        ".env",
        "build/out.py",
        "gen/made.py",
        "src/debug.log",
        "src/cache/c.py",
        "local/only-here.txt",
        "notes.swp",
        "secret/key.txt",
        "vendor/x.tmp",
        "modules/sub/x.out",
        "out.py",
        "outdir/more.py",
    ):
        assert left_out not in found


@needs_rg
@pytest.mark.parametrize("pattern", PATTERNS)
async def test_rg_walking_and_the_in_process_search_agree_on_the_parity_corpus(repo: Path, pattern: str) -> None:
    await both(repo, Scope(), pattern)


@needs_rg
@pytest.mark.parametrize(
    "scope",
    [
        Scope("src"),
        Scope(glob="*.py"),
        Scope(glob="*.log"),
        Scope("src", glob="*.py"),
        Scope(glob="src/*.py"),
        Scope(glob="[a-z]*.py"),
        Scope(glob=".*"),
        Scope(include_ignored=True),
        Scope("vendor"),
    ],
)
async def test_folders_globs_and_ignored_files_agree(repo: Path, scope: Scope) -> None:
    await both(repo, scope, "handler")


async def test_a_walk_whose_output_cannot_be_read_is_searched_in_process(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "output").write_bytes(b"./src/app.py\x00\n1:handler\n")  # not the form grep_hits.py reads
    fake_rg = tmp_path / "bin" / "rg"
    fake_rg.parent.mkdir()
    fake_rg.write_text(f"#!/bin/sh\ncat '{tmp_path / 'output'}'\n")
    fake_rg.chmod(0o755)
    compiled = compile_pattern("handler")
    found = await search_tree(repo, Scope(), chooser(repo, Scope()), compiled, 20, str(fake_rg))
    here = await search_tree(repo, Scope(), chooser(repo, Scope()), compiled, 20, None)
    assert found.engine == "re2" and found.hits == here.hits and found.hits


@needs_rg
async def test_a_name_with_a_line_break_cannot_forge_lines_of_another_file(repo: Path) -> None:
    forger = 'x: binary file matches (found "\\0" byte around offset 1)\nsrc'
    (repo / "q\nsrc").rename(repo / forger)
    try:
        found, _ = await both(repo, Scope(), "forged")
        assert found == [forger + "/app.py"]  # searched in process, under its own name
        compiled = compile_pattern("handler")
        walked = await search_tree(repo, Scope(), chooser(repo, Scope()), compiled, 20, RG)
        app = next(hit for hit in walked.hits if hit.path == "src/app.py")
        assert app.lines == [(3, "def handler_test(event):")]
    finally:
        (repo / forger).rename(repo / "q\nsrc")


@needs_rg
async def test_outside_git_the_files_go_to_rg_by_name(workspace: Path) -> None:
    write(workspace, {"a.py": b"handler\n", ".gitignore": b"b.py\n", "b.py": b"handler\n"})
    compiled = compile_pattern("handler")
    found = await search_tree(workspace, Scope(), chooser(workspace, Scope()), compiled, 20, RG)
    assert found.engine == "rg"
    assert [hit.path for hit in found.hits] == ["a.py"]


@needs_rg
async def test_a_failing_choice_stops_the_walk(repo: Path) -> None:
    def choose() -> Selection:
        raise ValueError("no")

    with pytest.raises(ValueError):
        await search_tree(repo, Scope(), choose, compile_pattern("handler"), 20, RG)


def test_only_paths_a_glob_names_exactly_are_left_out_of_the_walk() -> None:
    given = ["weird[1]/", "build/", "a b/", "trailing ", "y.log", "x\\y", "*.py", "café/", "{a,b}/", "!x"]
    assert _plain_excludes(given) == ["a b/", "build/", "y.log"]


def test_what_the_walk_leaves_out_is_searched_by_name() -> None:
    listed = sorted(
        ["a.py", "build/keep.py", "build/deep/x.py", "builder/x.py", "q\nsrc/app.py", "sub/.git/config", "y.log"]
    )
    excluded = frozenset({"build/", "y.log"})
    assert _missed(listed, excluded) == [
        "build/deep/x.py",
        "build/keep.py",
        "q\nsrc/app.py",
        "sub/.git/config",
        "y.log",
    ]


def test_the_paths_left_out_are_those_one_check_per_path_finds() -> None:
    """_missed bisects and scans the names joined; it finds what checking each path against each rule does."""
    rng = random.Random(7)
    parts = ["a", "b", "a b", "a.b", "a-b", ".git", "x\ny", "z\r", "build", "build0", "b/uild"]
    listed = sorted({"/".join(rng.choices(parts, k=rng.randint(1, 4))) for _ in range(3000)})
    folders = {path.rpartition("/")[0] + "/" for path in listed if "/" in path}
    excluded = frozenset(rng.sample(sorted(folders), 40) + rng.sample(listed, 40) + ["nowhere/", "gone.py"])

    def left_out(path: str) -> bool:
        under = any(entry.endswith("/") and path.startswith(entry) for entry in excluded)
        return under or path in excluded or "\n" in path or "\r" in path or ".git" in path.split("/")

    assert _missed(listed, excluded) == [path for path in listed if left_out(path)]


def test_git_stops_at_an_ignored_folder_and_goes_into_one_holding_a_tracked_file(repo: Path) -> None:
    _, ignored = SharedGit(repo).ignored()
    assert ignored is not None
    assert "src/cache/" in ignored and "local/" in ignored and ".env" in ignored
    assert "build/" not in ignored and "build/out.py" in ignored  # build/keep.py is tracked


def selected(root: Path, *, worktree: bool) -> Selection:
    return select(root, list_files(root, worktree=worktree).files)


def test_the_listing_unchecked_against_the_work_tree_selects_the_same_files(repo: Path, tmp_path: Path) -> None:
    """grep_code's listing leaves the stat of each file to select(): a deleted tracked file, a tracked file
    turned into a link (out of the workspace too) or a folder, a skip-worktree one are chosen as before."""
    assert selected(repo, worktree=False) == selected(repo, worktree=True)
    workspace = tmp_path / "changed"
    names = ["gone.py", "to-link.py", "to-out.py", "to-folder.py", "sparse.py", "kept.py"]
    write(workspace, {name: b"handler\n" for name in names})
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "c")
    git(workspace, "update-index", "--skip-worktree", "sparse.py")
    (workspace / "gone.py").unlink()
    (workspace / "to-link.py").unlink()
    (workspace / "to-link.py").symlink_to("kept.py")
    (workspace / "to-out.py").unlink()
    (workspace / "to-out.py").symlink_to(tmp_path / "outside" / "secret.py")
    (workspace / "to-folder.py").unlink()
    write(workspace, {"to-folder.py/inner.py": b"handler\n"})
    assert selected(workspace, worktree=False) == selected(workspace, worktree=True)
    chosen = selected(workspace, worktree=False)
    assert chosen.regular == ["kept.py", "to-folder.py/inner.py"]
    assert chosen.links == ["to-link.py", "to-out.py"]  # searched in process, below the workspace only


@needs_rg
async def test_rg_on_one_thread_finds_the_same(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (1000.0, 1000.0, 1000.0))  # a loaded machine
    assert rg_threads() == [RG_ONE_THREAD]
    await both(repo, Scope(), "handler")
    await both(repo, Scope(glob="*.py"), r"def \w+")


def test_rg_runs_on_one_thread_on_a_loaded_machine_only() -> None:
    assert rg_threads(load=2.0, cores=2) == [RG_ONE_THREAD]
    assert rg_threads(load=7.5, cores=4) == [RG_ONE_THREAD]
    assert rg_threads(load=1.9, cores=2) == []
    assert rg_threads(load=0.0, cores=1) == []


@needs_rg
async def test_a_remembered_ignored_list_that_went_stale_changes_no_result(tmp_path: Path) -> None:
    """rg's walk starts with the session's last answer of git for the ignored paths (no wait for git);
    the answer is stale once .gitignore changed: a folder no longer ignored is still excluded from the
    walk, and one newly ignored is walked. Either way the results are those of a fresh search, and the
    listing made meanwhile (the memo's stamps changed) asked git again for the next one."""
    root = tmp_path / "ws"
    write(
        root, {".gitignore": b"old/\n", "old/a.py": b"handler a\n", "new/b.py": b"handler b\n", "c.py": b"handler c\n"}
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    (root / "new" / "u.py").write_bytes(b"handler u, untracked\n")
    memo = ListingMemo(clock=lambda: time.time_ns() + 3 * 10**9)  # as if 3 s later: every stamp is settled
    pattern = compile_pattern("handler")

    def choose() -> Selection:
        remembered = memo.view(root, SharedGit(root))
        assert remembered is not None
        memo.settle()
        return remembered.selection(lambda path: True)

    first = await search_tree(root, Scope(), choose, pattern, 20, RG, memo=memo)
    assert [hit.path for hit in first.hits] == ["c.py", "new/b.py", "new/u.py"] and memo.ignored(root) == ["old/"]
    (root / ".gitignore").write_text("new/\n")  # old/ comes back, new/'s untracked file goes (b.py is tracked)
    stale = await search_tree(root, Scope(), choose, pattern, 20, RG, memo=memo)
    fresh = await search_tree(root, Scope(), chooser(root, Scope()), pattern, 20, RG)
    assert stale.engine == fresh.engine == "rg walk"
    assert [hit.path for hit in fresh.hits] == ["c.py", "new/b.py", "old/a.py"]
    assert stale.hits == fresh.hits
    assert memo.made == 2 and memo.ignored(root) == ["new/u.py"]
