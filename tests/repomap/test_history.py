"""The files that change together, from git history: counted, bounded, relative to the workspace, read
again when HEAD moves, used to widen the ranking, and never a way for a repository to run a program."""

from __future__ import annotations

import subprocess
from pathlib import Path

from paicli.common.events import ListSink
from paicli.repomap import history
from paicli.repomap.history import head_of, read_history
from paicli.repomap.repo_map import RepoMap
from tests.repomap.maprepo import make_repo
from tests.repos import git_init


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True).stdout


def commit(repo: Path, files: dict[str, str], message: str = "change") -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def test_pairs_changed_together_twice_are_kept_and_sweeping_commits_left_out(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    commit(repo, {"a.py": "1", "b.py": "1", "c.py": "1"})
    commit(repo, {"a.py": "2", "b.py": "2"})
    commit(repo, {"a.py": "3", "c.py": "3"})
    commit(repo, {f"sweep/{n}.py": "" for n in range(history.MAX_COMMIT_FILES)} | {"a.py": "4", "c.py": "4"})
    found = read_history(repo, head_of(repo) or "")
    assert found.changes["a.py"] == 3 and found.changes["b.py"] == 2 and "sweep/0.py" not in found.changes
    assert found.together == {("a.py", "b.py"): 2, ("b.py", "a.py"): 2, ("a.py", "c.py"): 2, ("c.py", "a.py"): 2}
    assert read_history(repo, head_of(repo) or "", commits=2).together == {}  # only the latest commits count


def test_a_workspace_below_the_repository_root_sees_its_own_paths(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    for n in range(2):
        commit(repo, {"app/src/x.py": str(n), "app/src/y.py": str(n), "other/z.py": str(n)})
    found = read_history(repo / "app", head_of(repo / "app") or "")
    assert set(found.changes) == {"src/x.py", "src/y.py"}


def test_outside_git_and_before_the_first_commit_there_is_no_history(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert head_of(tmp_path / "plain") is None
    assert head_of(git_init(tmp_path / "empty")) is None


def test_a_signed_commit_does_not_run_the_repository_s_signature_program(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    commit(repo, {"a.py": "1", "b.py": "1"})
    body = git(repo, "cat-file", "commit", "HEAD")
    header, _, message = body.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----"
    signed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        input=f"{header}\n{signature}\n\n{message}",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "HEAD", signed)
    marker = tmp_path / "ran"
    program = tmp_path / "fake-gpg"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", str(program))
    git(repo, "log", "-n", "1", "--format=%H")  # plain git runs it: the trap is set
    assert marker.exists()
    marker.unlink()
    assert read_history(repo, head_of(repo) or "").changes["a.py"] == 1
    assert not marker.exists()


def test_files_that_change_together_rise_in_the_map_and_a_new_head_is_read_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", extra={f"notes/n{n}.txt": "unrelated words\n" for n in range(40)})
    git(repo, "commit", "-qm", "first")
    home = tmp_path / "home"
    repo_map = RepoMap(repo, home, ListSink(), map_tokens=3_000)
    before = repo_map.for_goal("payment gateway charge").rendered.files
    for n in range(2):
        commit(repo, {"src/shop/payments.py": f"class PaymentGateway:\n    fee = {n}\n", "notes/n39.txt": str(n)})
    after = repo_map.for_goal("payment gateway charge").rendered.files
    repo_map.close()
    assert after.index("notes/n39.txt") < after.index("notes/n0.txt")
    assert before.index("notes/n39.txt") > before.index("notes/n0.txt")  # before those commits, by name only
