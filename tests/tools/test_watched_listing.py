"""The watched listing (the repository map's, for a session): after any change, what it gives is what a
fresh listing gives (files and the versions of unchanged tracked files), while most changes are listed
from the changed paths alone. It keeps no watch where a watch could not tell it everything."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from paicli.tools.file_lister import Listing, list_files
from paicli.tools.tree_watch import TreeWatch
from paicli.tools.watched_listing import WatchedListings
from tests.tools.test_file_lister import git, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def later() -> int:
    return time.time_ns() + 3 * 10**9  # as if 3 s had passed: what chose the folders is settled


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / "home").mkdir()
    root = tmp_path / "ws"
    write(
        root,
        {
            ".gitignore": "build/\n*.log\n.env\n",
            "src/app.py": "app\n",
            "src/util.py": "util\n",
            "src/pkg/deep.py": "deep\n",
            "docs/guide.md": "guide\n",
            "build/keep.py": "tracked in an ignored folder\n",
            "build/gen.py": "ignored\n",
            ".env": "SECRET=1\n",
        },
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "add", "-f", "build/keep.py")
    git(root, "commit", "-q", "-m", "first")
    write(root, {"notes.py": "untracked\n"})
    return root


def same_as_fresh(got: Listing, root: Path) -> None:
    fresh = list_files(root, view="model")
    assert got.files == fresh.files
    assert dict(got.versions).items() <= dict(fresh.versions).items()  # a version only where git gives it
    assert set(fresh.versions) - set(got.versions) <= set(got.files)


def test_changes_are_listed_from_the_changed_paths_alone(repo: Path) -> None:
    listings = WatchedListings(clock=later)
    first = listings(repo)
    assert "build/keep.py" in first.files and "build/gen.py" not in first.files and ".env" not in first.files
    assert listings(repo) is first  # nothing changed: nothing listed
    with open(repo / "src" / "app.py", "a") as file:
        file.write("edited\n")
    write(repo, {"src/new.py": "new\n", "build/more.py": "ignored\n", "debug.log": "ignored\n"})
    (repo / "docs" / "guide.md").unlink()
    got = listings(repo)
    assert "src/new.py" in got.files and "docs/guide.md" not in got.files
    assert "src/app.py" not in got.versions and "src/util.py" in got.versions  # the edited one is looked at
    same_as_fresh(got, repo)
    with open(repo / "build" / "keep.py", "a") as file:  # tracked, in an ignored folder: watched too
        file.write("edited\n")
    got = listings(repo)
    assert "build/keep.py" not in got.versions
    same_as_fresh(got, repo)
    assert (listings.listed, listings.relisted) == (1, 2)


def test_a_rules_change_or_an_index_change_lists_afresh(repo: Path) -> None:
    listings = WatchedListings(clock=later)
    listings(repo)
    (repo / ".gitignore").write_text("*.log\n")  # build/ is no longer ignored: its folder must be watched
    got = listings(repo)
    assert "build/gen.py" in got.files and listings.listed == 2
    write(repo, {"build/newer.py": "now seen\n"})
    assert "build/newer.py" in listings(repo).files and listings.relisted == 1
    git(repo, "add", "src/util.py", "notes.py")  # git's index written
    got = listings(repo)
    assert listings.listed == 3 and got.versions.get("notes.py") == list_files(repo).versions.get("notes.py")
    same_as_fresh(got, repo)
    (repo / ".paicliignore").write_text("docs/\n")
    assert not any(path.startswith("docs/") for path in listings(repo).files)
    assert listings.listed == 4


def test_no_watch_when_what_chose_the_folders_is_too_fresh(repo: Path) -> None:
    listings = WatchedListings()  # the real clock: .gitignore and the index were written a moment ago
    listings(repo)
    write(repo, {"src/new.py": "new\n"})
    assert "src/new.py" in listings(repo).files
    assert (listings.listed, listings.relisted) == (2, 0)


@pytest.mark.parametrize("where", ["nested", "subfolder", "no git", "no inotify"])
def test_listed_afresh_where_a_watch_cannot_tell_everything(repo: Path, where: str) -> None:
    root = repo
    start: Callable[..., TreeWatch | None] = TreeWatch.start
    if where == "nested":
        write(repo, {"vendor/lib.py": "a nested repository\n"})
        git(repo / "vendor", "init", "-q")
    elif where == "subfolder":
        root = repo / "src"
    elif where == "no git":
        subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    else:
        start = lambda *args: None  # noqa: E731 - not Linux, or inotify's limits reached
    listings = WatchedListings(start=start, clock=later)
    listings(root)
    write(repo, {"src/new.py": "new\n", "vendor/more.py": "more\n"})
    got = listings(root)
    assert got.files == list_files(root).files and ("new.py" in got.files or "src/new.py" in got.files)
    assert (listings.listed, listings.relisted) == (2, 0)


def test_a_repository_made_inside_stops_the_watch(repo: Path) -> None:
    listings = WatchedListings(clock=later)
    listings(repo)
    write(repo, {"vendor/lib.py": "x\n"})
    listings(repo)
    git(repo / "vendor", "init", "-q")
    write(repo, {"vendor/.gitignore": "lib.py\n"})  # its own rules now decide
    same_as_fresh(listings(repo), repo)
    write(repo, {"vendor/other.py": "y\n"})
    same_as_fresh(listings(repo), repo)


def test_a_link_out_of_the_workspace_never_shows(repo: Path, tmp_path: Path) -> None:
    listings = WatchedListings(clock=later)
    listings(repo)
    (tmp_path / "outside.py").write_text("secret\n")
    (repo / "src" / "out.py").symlink_to(tmp_path / "outside.py")
    (repo / "src" / "in.py").symlink_to("app.py")
    got = listings(repo)
    assert "src/in.py" in got.files and "src/out.py" not in got.files and listings.relisted == 1


OPERATIONS = [
    "write new",
    "edit tracked",
    "delete tracked",
    "delete untracked",
    "make folders",
    "rename file",
    "rename folder",
    "write ignored",
    "link",
    "edit gitignore",
    "git add",
    "commit",
    "remove folder",
    "untrack",
    "edit paicliignore",
    "link folder",
    "file to folder",
    "git noise",
    "nested repository",
]


def operate(root: Path, chance: random.Random, step: int) -> str:
    """One change chosen at random (`step` makes its names unique); what it was."""
    operation = chance.choice(OPERATIONS)
    files = [
        p
        for p in list_files(root, view="checkpoint").files
        if (root / p).is_file() and p not in (".gitignore", ".paicliignore")
    ]
    folders = sorted({str(Path(p).parent) for p in files if "/" in p})
    if operation == "write new":
        write(root, {f"{chance.choice([*folders, '.'])}/n{step}.py": "new\n"})
    elif operation == "edit tracked" and files:
        with open(root / chance.choice(files), "a") as file:
            file.write(f"edit {step}\n")
    elif operation in ("delete tracked", "delete untracked") and files:
        (root / chance.choice(files)).unlink()
    elif operation == "make folders":
        write(root, {f"made{step}/a/b/f{step}.py": "x\n"})
    elif operation == "rename file" and files:
        os.replace(root / chance.choice(files), root / f"renamed{step}.py")
    elif operation == "rename folder" and folders:
        source = root / chance.choice(folders)
        if source.is_dir():
            os.rename(source, root / f"folder{step}")
    elif operation == "write ignored":
        write(root, {f"build/i{step}.py": "ignored\n", f"src/x{step}.log": "ignored\n"})
    elif operation == "link" and files:
        (root / f"link{step}.py").symlink_to(chance.choice(files))
    elif operation == "edit gitignore":
        with open(root / ".gitignore", "a") as file:
            file.write(chance.choice(["n*.py\n", "!build/\n", "made*/\n"]))
    elif operation in ("git add", "commit"):  # may fail (an inner repository without a commit): no matter
        arguments = ["add", "-A"] if operation == "git add" else ["commit", "-q", "--allow-empty", "-am", f"{step}"]
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *arguments], cwd=root, capture_output=True)
    elif operation == "remove folder" and folders:
        subprocess.run(["rm", "-rf", str(root / chance.choice(folders))], check=True)
    elif operation == "untrack" and files:
        subprocess.run(["git", "rm", "-q", "--cached", "--", chance.choice(files)], cwd=root, capture_output=True)
    elif operation == "edit paicliignore":
        with open(root / ".paicliignore", "a") as file:
            file.write(chance.choice(["docs/\n", "*.md\n", "renamed*\n"]))
    elif operation == "link folder" and folders:
        (root / f"linked{step}").symlink_to(chance.choice(folders), target_is_directory=True)
    elif operation == "file to folder" and files:
        target = root / chance.choice(files)
        target.unlink()
        write(root, {f"{target.relative_to(root)}/inside{step}.py": "x\n"})
    elif operation == "git noise":
        (root / ".git" / "COMMIT_EDITMSG").write_text(f"noise {step}\n")
        (root / ".git" / "FETCH_HEAD").write_text("")
    elif operation == "nested repository" and step % 5 == 0:  # rare: it ends the watch for good
        write(root, {f"inner{step}/lib.py": "x\n"})
        git(root / f"inner{step}", "init", "-q")
    return operation


@pytest.mark.parametrize("seed", range(int(os.environ.get("PAICLI_WATCH_SEEDS", "4"))))
def test_after_any_sequence_of_changes_it_lists_what_a_fresh_listing_lists(repo: Path, seed: int) -> None:
    chance = random.Random(seed)
    listings = WatchedListings(clock=later)
    same_as_fresh(listings(repo), repo)
    done = []
    for _round in range(25):
        for _ in range(chance.randint(1, 3)):
            done.append(operate(repo, chance, len(done)))
        got = listings(repo)
        fresh = list_files(repo, view="model")
        assert got.files == fresh.files, f"after {done}"
        assert dict(got.versions).items() <= dict(fresh.versions).items(), f"after {done}"
    if "nested repository" not in done:  # else the watch may have ended at once (a repository inside)
        assert listings.relisted > 0


def test_hostile_names_are_asked_about_literally(repo: Path) -> None:
    """The changed paths go to git as literal pathspecs after `--`: a name that reads as a glob, as pathspec
    magic or as an option names that one file and nothing else (no duplicates, nothing missed)."""
    listings = WatchedListings(clock=later)
    listings(repo)
    names = ["*", "src/*.py", ":(exclude)src", "-rf", "--others", "a[1].py", "sp ace.py", "caf\udce9.py"]
    for name in names:
        path = repo / name
        with open(os.fsencode(path), "w") as file:
            file.write("x\n")
    got = listings(repo)
    assert listings.relisted == 1
    assert got.files == list_files(repo).files and len(set(got.files)) == len(got.files)
    assert set(names) <= set(got.files)


def test_a_changed_folder_takes_out_exactly_what_was_below_it(repo: Path) -> None:
    """Neighbours in sorted order ("src-old/", "src.py", "src0.py") stay when "src" changes, and
    overlapping changed paths ("src", "src/pkg") are taken out once."""
    from paicli.tools.file_lister import relist
    from paicli.tools.git_listing import SharedGit

    write(repo, {"src-old/y.py": "y\n", "src.py": "s\n", "src0.py": "z\n", "src/pkg/more.py": "m\n"})
    previous = list_files(repo)
    subprocess.run(["rm", "-rf", str(repo / "src")], check=True)
    got = relist(repo, previous, {"src", "src/pkg"}, SharedGit(repo))
    assert got is not None and got.files == list_files(repo).files
    assert {"src-old/y.py", "src.py", "src0.py"} <= set(got.files) and not any(p.startswith("src/") for p in got.files)
    assert not any(path.startswith("src/") for path in got.versions)


def test_a_watch_refused_as_too_fresh_is_tried_again_once_settled(repo: Path) -> None:
    """Until what chose the folders has settled, each listing is a plain one (no walk to watch the folders
    on every call: a session right after a checkout); once it has, the watch is made."""
    now = [time.time_ns()]
    starts: list[Path] = []

    def start(root: Path, *args: object) -> TreeWatch | None:
        starts.append(root)
        return TreeWatch.start(root, *args)  # type: ignore[arg-type]

    listings = WatchedListings(start=start, clock=lambda: now[0])
    listings(repo)
    now[0] += 10**9
    write(repo, {"src/one.py": "1\n"})
    assert "src/one.py" in listings(repo).files and len(starts) == 1
    now[0] += 3 * 10**9
    listings(repo)
    write(repo, {"src/two.py": "2\n"})
    assert "src/two.py" in listings(repo).files
    assert len(starts) == 2 and (listings.listed, listings.relisted) == (3, 1)


def test_closing_does_not_wait_for_a_listing_under_way(repo: Path) -> None:
    """The session's end closes the watches at once; a listing still walking (a warm-up on a large tree)
    closes its own as it ends, and nothing is watched after that."""
    import threading

    release = threading.Event()
    made: list[TreeWatch] = []

    def slow_start(root: Path, *args: object) -> TreeWatch | None:
        release.wait(5)
        watch = TreeWatch.start(root, *args)  # type: ignore[arg-type]
        if watch is not None:
            made.append(watch)
        return watch

    listings = WatchedListings(start=slow_start, clock=later)
    walking = threading.Thread(target=listings, args=(repo,))
    walking.start()
    time.sleep(0.1)
    closing = threading.Thread(target=listings.close)
    closing.start()
    closing.join(5)
    assert not closing.is_alive() and walking.is_alive()  # closed at once, the walk still under way
    release.set()
    walking.join(10)
    assert made and made[0].closed  # closed as the listing ended
    (repo / "src" / "late.py").write_text("x\n")
    assert "src/late.py" in listings(repo).files and listings.relisted == 0


def test_a_folder_swapped_for_a_link_out_of_the_workspace_lists_nothing_of_outside(repo: Path, tmp_path: Path) -> None:
    """The classic swap: a watched folder removed and a symlink to a folder outside put in its place. The
    link is one changed path; nothing below it is listed (git does not follow it), and the link itself,
    resolving outside, stays out of the model's view."""
    outside = tmp_path / "outside"
    write(outside, {"secret.py": "KEY = 1\n", "deeper/more.py": "x\n"})
    listings = WatchedListings(clock=later)
    listings(repo)
    subprocess.run(["rm", "-rf", str(repo / "docs")], check=True)
    (repo / "docs").symlink_to(outside, target_is_directory=True)
    got = listings(repo)
    assert not any(path == "docs" or path.startswith("docs/") for path in got.files)
    assert got.files == list_files(repo).files and listings.relisted == 1
