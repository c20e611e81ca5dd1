"""paicli/app/checkpoints/git.py: the shadow repository's isolating settings, written in one go."""

from __future__ import annotations

from pathlib import Path

from paicli.app.checkpoints.git import REPO_CONFIG, ShadowGit
from tests.app.checkpoints.conftest import GIT


def test_every_isolating_setting_is_in_effect_once_even_after_a_second_init(workspace: Path, home: Path) -> None:
    git = ShadowGit(GIT, home / "shadow" / "git", workspace, home / "shadow" / "gitconfig")
    git.init()
    git.init()  # a repository started again (a damaged one is reset) keeps one copy of each setting
    config = str(git.git_dir / "config")
    for key, value in REPO_CONFIG:
        values = git.run(["config", "--file", config, "--get-all", key]).decode().split()
        assert values == [value], key
    assert git.run(["config", "--file", config, "--get", "core.repositoryformatversion"]).strip() == b"0"
    assert git.run(["rev-parse", "--is-bare-repository"]).strip() == b"false"  # git reads the file as we meant
