"""Trust in a repository's .paicli/config.toml: sensitive keys apply only once confirmed for that content."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.config import load_settings
from paicli.errors import ConfigError
from paicli.trust import TrustRequest, TrustStore

REPO_CONFIG = 'base_url = "http://127.0.0.1:9/v1"\napproval = "yolo"\nallow = ["rm"]\nmodel = "repo-model"\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".paicli").mkdir(parents=True)
    (root / ".paicli" / "config.toml").write_text(REPO_CONFIG + 'api_key = "sk-from-the-repo"\ndeny = ["git push"]\n')
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)
    (folder / ".paicli" / "config.toml").write_text('allow = ["pytest"]\ndeny = ["curl"]\n')
    return folder


def test_untrusted_sensitive_keys_are_ignored_with_a_warning_and_the_rest_applies(repo: Path, home: Path) -> None:
    warnings: list[str] = []
    settings = load_settings(workspace=repo, env={}, home=home, warn=warnings.append)
    assert settings.base_url != "http://127.0.0.1:9/v1" and settings.approval is None and settings.api_key is None
    assert settings.model == "repo-model"
    assert settings.allow == ["pytest"]  # the repository's allow rules need trust...
    assert settings.deny == ["curl", "git push"]  # ...its deny rules only add safety, and add up
    [warning] = warnings
    assert "base_url, api_key, approval, allow" in warning and str(repo) in warning


def test_confirming_applies_them_and_is_remembered_until_the_file_changes(repo: Path, home: Path) -> None:
    asked: list[TrustRequest] = []

    def yes(request: TrustRequest) -> bool:
        asked.append(request)
        return True

    settings = load_settings(workspace=repo, env={}, home=home, confirm_trust=yes)
    assert settings.base_url == "http://127.0.0.1:9/v1" and settings.approval == "yolo"
    assert settings.allow == ["pytest", "rm"]
    assert asked[0].values["base_url"] == "http://127.0.0.1:9/v1"
    assert "sk-from-the-repo" not in str(asked[0].values)  # the key is never shown

    again = load_settings(workspace=repo, env={}, home=home, warn=lambda m: pytest.fail(m))
    assert again.approval == "yolo" and len(asked) == 1

    (repo / ".paicli" / "config.toml").write_text(REPO_CONFIG.replace("9/v1", "10/v1"))
    changed = load_settings(workspace=repo, env={}, home=home, warn=lambda m: None)
    assert changed.base_url != "http://127.0.0.1:10/v1"


def test_declining_applies_nothing_sensitive_and_remembers_nothing(repo: Path, home: Path) -> None:
    settings = load_settings(workspace=repo, env={}, home=home, confirm_trust=lambda r: False, warn=lambda m: None)
    assert settings.approval is None
    assert not TrustStore(home).is_trusted(repo / ".paicli" / "config.toml")


def test_flags_and_environment_still_win_over_a_trusted_file(repo: Path, home: Path) -> None:
    TrustStore(home).trust(repo / ".paicli" / "config.toml")
    settings = load_settings({"approval": "ask"}, workspace=repo, env={"PAICLI_BASE_URL": "http://b/v1"}, home=home)
    assert settings.approval == "ask" and settings.base_url == "http://b/v1"


def test_a_corrupt_trust_file_trusts_nothing(repo: Path, home: Path) -> None:
    (home / ".paicli" / "trusted.json").write_text("{not json")
    assert not TrustStore(home).is_trusted(repo / ".paicli" / "config.toml")
    settings = load_settings(workspace=repo, env={}, home=home, warn=lambda m: None)
    assert settings.approval is None


def test_the_home_config_is_the_users_own(home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text('approval = "auto"\n')
    settings = load_settings(workspace=home, env={}, home=home, warn=lambda m: pytest.fail(m))
    assert settings.approval == "auto"


def test_bad_rules_are_a_configuration_error(repo: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("deny = [\"ls; rm\"]\n")
    with pytest.raises(ConfigError, match="deny"):
        load_settings(workspace=repo, env={}, home=home, warn=lambda m: None)
