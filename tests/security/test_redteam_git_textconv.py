"""Issue 31, finding 7: `.git/config` with `include.path = ../.gitconfig` let a model-written `.gitconfig`
set a textconv driver, and a `.gitattributes` name it: `git diff` ran the model's program, every step
`allowed`. Read-only git commands now ask when git's configuration lets a workspace file choose a program."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.policy.classify import Risk, classify_command
from paicli.policy.git_config import workspace_config
from tests.repos import git_init

READERS = ["git diff", "git log -p", "git show HEAD", "git diff HEAD -- a.txt", "git blame a.txt", "git status"]


def repository(workspace: Path) -> Path:
    git_init(workspace)
    (workspace / "a.txt").write_text("one\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "a.txt"], cwd=workspace, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-qm", "one"],
        cwd=workspace,
        check=True,
        capture_output=True,
        env={**env, "PATH": "/usr/bin:/bin"},
    )
    (workspace / "a.txt").write_text("two\n")
    return workspace


def include(workspace: Path, section: str, path: str) -> None:
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f"{section}\n\tpath = {path}\n")


def driver(file: Path, out: Path) -> None:
    """What the model writes: a config with a textconv driver that leaves a mark."""
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f'[diff "x"]\n\ttextconv = "touch {out}; cat"\n')


@pytest.fixture
def repo(workspace: Path) -> Path:
    return repository(workspace)


@pytest.mark.parametrize(
    ("section", "path", "written"),
    [
        ("[include]", "../.gitconfig", ".gitconfig"),
        ("[include]", "../sub/../.gitconfig", ".gitconfig"),
        ("[include]", "../deep/er/x.cfg", "deep/er/x.cfg"),
        ('[includeIf "gitdir:/"]', "../.gitconfig", ".gitconfig"),
        ('[IncludeIf "onbranch:*"]', '"../.gitconfig"', ".gitconfig"),
        ("[include]", "{root}/.gitconfig", ".gitconfig"),
        ("[ include ]", "../.gitconfig", ".gitconfig"),
    ],
)
def test_an_included_workspace_file_makes_git_readers_ask(
    repo: Path, tmp_path: Path, section: str, path: str, written: str
) -> None:
    include(repo, section, path.format(root=repo))
    driver(repo / written, tmp_path / "ran")
    (repo / ".gitattributes").write_text("* diff=x\n")
    for command in READERS:
        assert classify_command(command, repo).risk is Risk.ASK, command


def test_an_include_chain_through_a_file_outside_still_counts(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "shared.cfg").write_text(f"[include]\n\tpath = {repo}/.hidden.cfg\n")
    include(repo, "[include]", str(tmp_path / "shared.cfg"))
    assert workspace_config(repo) is not None and classify_command("git diff", repo).risk is Risk.ASK


def test_the_users_global_config_including_a_workspace_file_counts(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[include]\n\tpath = " + str(repo / ".gitconfig") + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert classify_command("git diff", repo).risk is Risk.ASK


def test_a_driver_the_user_configured_asks_once_the_workspace_has_gitattributes(repo: Path, tmp_path: Path) -> None:
    driver(tmp_path / "unused.cfg", tmp_path / "ran")
    with (repo / ".git" / "config").open("a") as config:
        config.write('[filter "lfs"]\n\tsmudge = git-lfs smudge -- %f\n')
    assert classify_command("git diff", repo).risk is Risk.SAFE  # no .gitattributes yet
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / ".gitattributes").write_text("*.bin filter=lfs\n")
    assert classify_command("git diff", repo).risk is Risk.ASK


def test_attributes_file_in_the_workspace_counts(repo: Path) -> None:
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core]\n\tattributesFile = attrs\n")
    assert classify_command("git diff", repo).risk is Risk.ASK


def test_includes_outside_the_workspace_and_plain_repositories_stay_safe(repo: Path, tmp_path: Path) -> None:
    assert classify_command("git diff", repo).risk is Risk.SAFE
    (tmp_path / "mine.cfg").write_text("[user]\n\tname = me\n")
    include(repo, "[include]", str(tmp_path / "mine.cfg"))
    (repo / ".gitattributes").write_text("*.txt text\n")
    for command in READERS:
        assert classify_command(command, repo).risk is Risk.SAFE, command


def test_the_attack_really_runs_when_nobody_checks(repo: Path, tmp_path: Path) -> None:
    """The control: with plain git, the setup of the finding runs the model's program on `git diff`."""
    include(repo, "[include]", "../.gitconfig")
    driver(repo / ".gitconfig", tmp_path / "ran")
    (repo / ".gitattributes").write_text("* diff=x\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "diff"], cwd=repo, env=env, capture_output=True, timeout=30, check=False)
    assert (tmp_path / "ran").exists()
