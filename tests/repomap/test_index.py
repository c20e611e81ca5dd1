"""The index: incremental, bounded, confined, outside the repository, rebuilt when corrupt, shared by two
processes; and the files it lists with and without git."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from paicli.common.events import ListSink, Notice
from paicli.repomap.files import workspace_files
from paicli.repomap.index import Index, index_folder
from paicli.repomap.repo_map import RepoMap
from paicli.tools.file_lister import Listing
from tests.repomap.maprepo import make_repo


def index_of(repo: Path, home: Path, lister: object = workspace_files) -> tuple[Index, ListSink]:
    sink = ListSink()
    return Index(repo, index_folder(home, repo), lister, sink), sink  # type: ignore[arg-type]


def test_the_index_lives_in_home_and_updates_only_what_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index, _ = index_of(repo, tmp_path / "home")
    first = index.update()
    assert (first.read, first.listed) == (8, 8)
    assert (tmp_path / "home" / ".paicli" / "index").is_dir()
    assert not any(".paicli" in name or "sqlite" in name for name in os.listdir(repo))
    (repo / "src/shop/prices.py").write_text("def discount_for(cart: object) -> int:\n    return 10\n")
    (repo / "docs/index.md").unlink()
    second = index.update()
    assert (second.read, second.dropped) == (1, 1)
    assert second.seconds < 1.0
    assert index.postings("discount_for").keys() == {"src/shop/prices.py", "src/shop/cart.py"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_git_versions_spare_stats_but_every_change_is_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    index, _ = index_of(repo, tmp_path / "home")
    assert index.update().read == 8 and index.update().read == 0
    prices = repo / "src/shop/prices.py"
    prices.write_text(
        "def discount_for(cart: object) -> int:\n    return 10\n\ndef loyalty_reward() -> int:\n    return 1\n"
    )
    assert index.update().read == 1 and "src/shop/prices.py" in index.postings("loyalty_reward")
    git(repo, "add", "src/shop/prices.py")
    assert index.update().read == 0  # git now names the content that was read: nothing to read again
    git(repo, "checkout", "-q", "HEAD", "--", "src/shop/prices.py")
    assert index.update().read == 1 and not index.postings("loyalty_reward")
    git(repo, "update-index", "--assume-unchanged", "src/shop/cart.py")
    (repo / "src/shop/cart.py").write_text("class Basket:\n    pass\n")
    assert index.update().read == 1 and index.definers(["Basket"]) == {"Basket": ["src/shop/cart.py"]}
    index.close()
    reopened, _ = index_of(repo, tmp_path / "home")  # a new process: the same index, nothing to read
    assert reopened.update().read == 0


def test_not_a_git_repository_is_walked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "plain", git=False)
    (repo / "node_modules" / "lib").mkdir(parents=True)
    (repo / "node_modules" / "lib" / "index.js").write_text("function x() {}\n")
    files = workspace_files(repo).files
    assert "src/shop/cart.py" in files and not any(f.startswith("node_modules/") for f in files)


def test_without_git_the_workspace_is_walked(tmp_path: Path, monkeypatch: object) -> None:
    repo = make_repo(tmp_path / "repo")
    env = {**os.environ, "PATH": "/nonexistent"}
    code = (
        "from paicli.repomap.files import workspace_files; from pathlib import Path; "
        f"print(workspace_files(Path({str(repo)!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "src/shop/cart.py" in done.stdout


def test_huge_binary_and_minified_files_are_listed_but_not_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with open(repo / "huge.py", "wb") as huge:  # 50 MB, sparse: quick to make
        huge.truncate(50 * 1024 * 1024)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + os.urandom(4096))
    (repo / "bundle.min.js").write_bytes(b"var a=function(){return 1};" * 200_000)  # 5 MB, one line
    (repo / "latin1.py").write_bytes(b"def caf\xe9():\n    pass\n# \xff\xfe\n")
    repo_map = RepoMap(repo, tmp_path / "home", ListSink())
    started = time.monotonic()
    result = repo_map.for_goal("huge.py logo.png bundle.min.js latin1.py")
    assert time.monotonic() - started < 10
    assert set(result.named) == {"huge.py", "logo.png", "bundle.min.js", "latin1.py"}
    assert repo_map.index.symbols("latin1.py")[0].name.startswith("caf")
    assert repo_map.index.symbols("bundle.min.js") == []


def test_symlinks_out_of_the_workspace_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def leaked_secret_function():\n    pass\n")
    repo = make_repo(tmp_path / "repo")
    (repo / "link.py").symlink_to(outside / "secret.py")
    (repo / "linkdir").symlink_to(outside)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    text = RepoMap(repo, tmp_path / "home", ListSink()).for_goal("leaked secret function link.py").text
    assert "leaked_secret_function" not in text
    assert "linkdir/secret.py" not in text


def test_a_file_deleted_between_listing_and_reading_is_skipped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")

    def lister(workspace: Path) -> Listing:
        listed = workspace_files(workspace)
        (workspace / "src/shop/payments.py").unlink()
        return replace(listed, files=(*listed.files, "src/shop/never_there.py"))

    index, _ = index_of(repo, tmp_path / "home", lister)
    report = index.update()
    assert report.listed == 7
    assert "src/shop/payments.py" not in index.paths and "src/shop/never_there.py" not in index.paths
    assert index.symbols("src/shop/payments.py") == []
    assert index.postings("discount_for")


def test_a_corrupt_index_is_rebuilt_with_a_notice(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index, _ = index_of(repo, tmp_path / "home")
    index.update()
    index.close()
    database = index.folder / "index.sqlite"
    for leftover in index.folder.glob("index.sqlite-*"):
        leftover.unlink()
    database.write_bytes(b"SQLite format 3\0" + b"\xde\xad" * 4096)
    again, sink = index_of(repo, tmp_path / "home")
    report = again.update()
    assert report.read == 8
    notices = [e for e in sink.events if isinstance(e, Notice)]
    assert notices and "rebuil" in notices[0].message
    assert again.postings("payment_gateway")


def test_a_page_damaged_where_ranking_reads_it_rebuilds_the_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index, _ = index_of(repo, tmp_path / "home")
    index.update()
    page_size = index.db.execute("PRAGMA page_size").fetchone()[0]
    root_page = index.db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'terms'").fetchone()[0]
    index.close()  # the WAL goes into the file
    with open(index.folder / "index.sqlite", "r+b") as database:
        database.seek((root_page - 1) * page_size)
        database.write(b"\xde\xad" * (page_size // 2))
    sink = ListSink()
    result = RepoMap(repo, tmp_path / "home", sink).for_goal("payment gateway")
    assert "src/shop/payments.py" in result.text
    assert any(isinstance(e, Notice) and "rebuilding" in e.message for e in sink.events)


def test_two_processes_at_once_both_get_a_map(tmp_path: Path) -> None:
    extra = {f"pkg/mod_{n}.py": f"def helper_{n}(x: int) -> int:\n    return x\n" * 20 for n in range(400)}
    repo = make_repo(tmp_path / "repo", extra=extra)
    home = tmp_path / "home"
    code = (
        "import sys; from pathlib import Path; from paicli.common.events import ListSink; "
        "from paicli.repomap.repo_map import RepoMap; "
        f"r = RepoMap(Path({str(repo)!r}), Path({str(home)!r}), ListSink()).for_goal('cart total'); "
        "print(r.update.updated, 'src/shop/cart.py' in r.text)"
    )
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=120)[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert ["True", "True"] in outputs  # one built it
    assert all(output[1] == "True" or output[0] == "False" for output in outputs)
    assert not (index_folder(home, repo) / "build.lock").exists()
    index, _ = index_of(repo, home)
    assert index.update().read == 0  # complete: nothing left to read


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index, _ = index_of(repo, tmp_path / "home")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    index.folder.mkdir(parents=True)
    (index.folder / "build.lock").write_text(dead.stdout.strip())
    report = index.update()
    assert report.updated and report.read == 8


def test_the_sessions_watched_listing_brings_the_same_updates(tmp_path: Path) -> None:
    """A session's plans list the workspace through its watched listing (paicli/tools/watched_listing.py):
    an edit, a new file and a deletion reach the index as they do through a fresh listing, each update
    asking git about the changed paths only."""
    from paicli.repomap.files import watched_files
    from paicli.tools.watched_listing import WatchedListings

    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    listings = WatchedListings(clock=lambda: time.time_ns() + 3 * 10**9)  # as if settled for 3 s
    index, _ = index_of(repo, tmp_path / "home", watched_files(listings))
    assert index.update().read == 8 and index.update().read == 0
    (repo / "src/shop/prices.py").write_text("def loyalty_reward() -> int:\n    return 1\n")
    (repo / "src/shop/extra.py").write_text("def gift_card() -> None:\n    pass\n")
    (repo / "docs/index.md").unlink()
    report = index.update()
    assert (report.read, report.dropped, report.listed) == (2, 1, 8)
    assert "src/shop/prices.py" in index.postings("loyalty_reward") and index.postings("gift_card")
    assert index.paths == list(workspace_files(repo).files)
    if sys.platform.startswith("linux"):
        assert (listings.listed, listings.relisted) == (1, 1)
