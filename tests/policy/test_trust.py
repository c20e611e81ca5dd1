"""Trust in a repository's .paicli/config.toml: sensitive keys apply only once confirmed for that content,
in that repository; spending limits may only go down untrusted; symlinked files are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.config import Settings
from paicli.config_sources import load_settings
from paicli.trust import RepoFile, TrustRequest, TrustStore, read_repo_file
from paicli.trusted_folders import trusted_prompt
from tests.conftest import unexpected_warning

REPO_CONFIG = 'base_url = "http://127.0.0.1:9/v1"\napproval = "yolo"\nallow = ["rm"]\nmodel = "repo-model"\n'
CONFIG = ".paicli/config.toml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".paicli").mkdir(parents=True)
    (root / ".paicli" / "config.toml").write_text(REPO_CONFIG + 'api_key = "sk-from-the-repo"\ndeny = ["git push"]\n')
    return root


def repo_file(repo: Path) -> RepoFile:
    file = read_repo_file(repo, CONFIG)
    assert file is not None
    return file


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
    assert settings.model == "gpt-4o-mini"  # a model name picks what the user pays: it needs trust (issue 21)
    assert settings.allow == ["pytest"]  # the repository's allow rules need trust...
    assert settings.deny == ["curl", "git push"]  # ...its deny rules only add safety, and add up
    [warning] = warnings
    assert "base_url, api_key, approval, allow, model" in warning and str(repo) in warning


def test_confirming_applies_them_and_is_remembered_until_the_file_changes(repo: Path, home: Path) -> None:
    asked: list[TrustRequest] = []

    def yes(request: TrustRequest) -> bool:
        asked.append(request)
        return True

    settings = load_settings(workspace=repo, env={}, home=home, confirm_trust=yes, warn=unexpected_warning)
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
    assert not TrustStore(home).is_trusted(repo_file(repo))


def test_flags_and_environment_still_win_over_a_trusted_file(repo: Path, home: Path) -> None:
    assert TrustStore(home).trust_current(repo, CONFIG)
    settings = load_settings(
        {"approval": "ask"}, workspace=repo, env={"PAICLI_BASE_URL": "http://b/v1"}, home=home, warn=unexpected_warning
    )
    assert settings.approval == "ask" and settings.base_url == "http://b/v1"


def test_a_corrupt_trust_file_trusts_nothing(repo: Path, home: Path) -> None:
    (home / ".paicli" / "trusted.json").write_text("{not json")
    assert not TrustStore(home).is_trusted(repo_file(repo))
    settings = load_settings(workspace=repo, env={}, home=home, warn=lambda m: None)
    assert settings.approval is None


def test_the_home_config_is_the_users_own(home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text('approval = "auto"\n')
    settings = load_settings(workspace=home, env={}, home=home, warn=lambda m: pytest.fail(m))
    assert settings.approval == "auto"


def test_bad_rules_are_a_configuration_error(repo: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text('deny = ["ls; rm"]\n')
    with pytest.raises(ConfigError, match="deny"):
        load_settings(workspace=repo, env={}, home=home, warn=lambda m: None)


# ---- trust follows the repository and the file, never a symlink (issue 19, class 8) -----------------


@pytest.fixture
def trusted_elsewhere(tmp_path: Path, home: Path) -> Path:
    """Another repository whose config (approval = "yolo") the user has trusted."""
    other = tmp_path / "other"
    (other / ".paicli").mkdir(parents=True)
    (other / CONFIG).write_text('approval = "yolo"\n')
    assert TrustStore(home).trust_current(other, CONFIG)
    assert load_settings(workspace=other, env={}, home=home, warn=lambda m: pytest.fail(m)).approval == "yolo"
    return other


def never_asked(request: TrustRequest) -> bool:
    raise AssertionError(f"asked to trust {request.path}")


@pytest.mark.parametrize("link", ["config", "folder"])
def test_a_symlink_to_a_trusted_config_counts_for_nothing(
    tmp_path: Path, home: Path, trusted_elsewhere: Path, link: str
) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    if link == "config":
        (evil / ".paicli").mkdir()
        (evil / CONFIG).symlink_to(trusted_elsewhere / CONFIG)
    else:
        (evil / ".paicli").symlink_to(trusted_elsewhere / ".paicli", target_is_directory=True)
    warnings: list[str] = []
    settings = load_settings(workspace=evil, env={}, home=home, confirm_trust=never_asked, warn=warnings.append)
    assert settings.approval is None
    [warning] = warnings
    assert "is a symlink" in warning and "ignored" in warning and str(evil) in warning


def test_the_same_content_in_another_repository_is_asked_about_again(
    tmp_path: Path, home: Path, trusted_elsewhere: Path
) -> None:
    copy = tmp_path / "copy"
    (copy / ".paicli").mkdir(parents=True)
    (copy / CONFIG).write_bytes((trusted_elsewhere / CONFIG).read_bytes())
    asked: list[TrustRequest] = []
    settings = load_settings(
        workspace=copy, env={}, home=home, confirm_trust=lambda r: asked.append(r) or False, warn=lambda m: None
    )
    assert settings.approval is None and [r.path for r in asked] == [copy / CONFIG]


def test_trust_recorded_in_the_old_format_is_asked_about_again(repo: Path, home: Path) -> None:
    import hashlib
    import json

    digest = hashlib.sha256((repo / CONFIG).read_bytes()).hexdigest()
    (home / ".paicli" / "trusted.json").write_text(json.dumps({"version": 1, "configs": {str(repo / CONFIG): digest}}))
    asked: list[TrustRequest] = []
    load_settings(
        workspace=repo, env={}, home=home, confirm_trust=lambda r: asked.append(r) or True, warn=unexpected_warning
    )
    assert len(asked) == 1
    assert load_settings(workspace=repo, env={}, home=home, warn=lambda m: pytest.fail(m)).approval == "yolo"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse", "folder"])
def test_a_config_that_is_not_a_small_regular_file_is_refused_at_once(tmp_path: Path, home: Path, kind: str) -> None:
    repo = tmp_path / "r"
    (repo / ".paicli").mkdir(parents=True)
    config = repo / CONFIG
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "dev-zero":
        config.symlink_to("/dev/zero")
    elif kind == "sparse":
        with open(config, "wb") as sparse:
            sparse.truncate(1 << 30)
    else:
        config.mkdir()
    warnings: list[str] = []
    settings = load_settings(workspace=repo, env={}, home=home, warn=warnings.append)
    assert settings.approval is None
    expected = {
        "fifo": "is a FIFO",
        "dev-zero": "is a symlink",
        "sparse": "is 1.0 GB, over the 1.0 MB",
        "folder": "is a folder",
    }
    assert any(expected[kind] in w and "its settings are ignored" in w for w in warnings), warnings


def test_symlinked_prompt_overrides_are_refused_and_never_trusted(tmp_path: Path, home: Path) -> None:
    other = tmp_path / "other"
    (other / ".paicli" / "prompts").mkdir(parents=True)
    (other / ".paicli" / "prompts" / "system.md").write_text("trusted text of another repository")
    assert TrustStore(home).trust_current(other, ".paicli/prompts/system.md")
    evil = tmp_path / "evil"
    (evil / ".paicli" / "prompts" / "modes").mkdir(parents=True)
    (evil / ".paicli" / "prompts" / "system.md").symlink_to(other / ".paicli" / "prompts" / "system.md")
    (evil / ".paicli" / "prompts" / "modes" / "planner.md").symlink_to("/etc/hostname")
    warnings: list[str] = []
    load_settings(workspace=evil, env={}, home=home, confirm_trust=never_asked, warn=warnings.append)
    [warning] = warnings
    assert "modes/planner.md (a symlink)" in warning and "system.md (a symlink)" in warning
    assert trusted_prompt(evil, home, "system.md") is None
    assert trusted_prompt(other, home, "system.md") == "trusted text of another repository"


def test_a_symlinked_prompts_folder_is_refused(tmp_path: Path, home: Path) -> None:
    other = tmp_path / "other"
    (other / "prompts").mkdir(parents=True)
    (other / "prompts" / "system.md").write_text("x")
    evil = tmp_path / "evil"
    (evil / ".paicli").mkdir(parents=True)
    (evil / ".paicli" / "prompts").symlink_to(other / "prompts", target_is_directory=True)
    warnings: list[str] = []
    load_settings(workspace=evil, env={}, home=home, confirm_trust=never_asked, warn=warnings.append)
    assert any("prompt overrides" in w and "is a symlink" in w for w in warnings), warnings


# ---- spending limits: only downwards untrusted (issue 21) --------------------------------------------


def settings_with(tmp_path: Path, home: Path, repo_config: str, **options: object) -> tuple[Settings, list[str]]:
    repo = tmp_path / "spend"
    (repo / ".paicli").mkdir(parents=True, exist_ok=True)
    (repo / CONFIG).write_text(repo_config)
    warnings: list[str] = []
    return load_settings(workspace=repo, env={}, home=home, warn=warnings.append, **options), warnings  # type: ignore[arg-type]


def test_a_repository_cannot_raise_spending_limits_untrusted(tmp_path: Path, home: Path) -> None:
    config = "max_rounds = 20\nreview_threshold = 10\nmax_parallel = 64\nmax_replans = 9\nmax_steps = 500\n"
    config += 'reviewer_model = "o1-pro"\nmax_tokens = 100000\ncontext_tokens = 900000\nmax_attempts = 10\n'
    settings, [warning] = settings_with(tmp_path, home, config)
    assert (settings.max_rounds, settings.review_threshold, settings.max_parallel) == (3, 8.0, 4)
    assert (settings.max_replans, settings.max_steps, settings.reviewer_model) == (2, 30, None)
    assert (settings.max_tokens, settings.context_tokens, settings.max_attempts) == (None, 64_000, 3)
    assert "max_rounds = 20 (yours: 3)" in warning and "review_threshold = 10 (yours: 8.0)" in warning
    assert "reviewer_model" in warning and "max_tokens = 100000 (yours: unset)" in warning


def test_a_repository_may_lower_spending_limits_untrusted(tmp_path: Path, home: Path) -> None:
    config = "max_rounds = 1\nreview_threshold = 6\nmax_parallel = 2\nmax_budget_tokens = 50000\nreview = false\n"
    settings, warnings = settings_with(tmp_path, home, config)
    assert warnings == []
    assert (settings.max_rounds, settings.review_threshold, settings.max_parallel) == (1, 6.0, 2)
    assert settings.max_budget_tokens == 50_000 and settings.review is False


def test_the_users_own_values_are_the_measure(tmp_path: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("review = false\nmax_budget_tokens = 10000\nmax_parallel = 8\n")
    settings, [warning] = settings_with(tmp_path, home, "review = true\nmax_budget_tokens = 20000\nmax_parallel = 6\n")
    assert settings.review is False and settings.max_budget_tokens == 10_000  # not raised
    assert settings.max_parallel == 6  # under the user's 8: applies
    assert "review = True (yours: False)" in warning and "max_budget_tokens = 20000 (yours: 10000)" in warning


def test_trusted_the_raised_limits_apply_and_the_question_shows_them(tmp_path: Path, home: Path) -> None:
    asked: list[TrustRequest] = []
    settings, warnings = settings_with(
        tmp_path, home, 'max_rounds = 20\nmodel = "big"\n', confirm_trust=lambda r: asked.append(r) or True
    )
    assert settings.max_rounds == 20 and settings.model == "big" and warnings == []
    assert asked[0].values == {"model": "big", "max_rounds": "20 (yours: 3)"}


def test_flags_still_win_over_an_untrusted_raise(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "flags"
    (repo / ".paicli").mkdir(parents=True)
    (repo / CONFIG).write_text("max_parallel = 64\n")
    settings = load_settings({"max_parallel": 16}, workspace=repo, env={}, home=home, warn=lambda m: None)
    assert settings.max_parallel == 16


def test_a_repository_cannot_choose_models_or_prices_untrusted(tmp_path: Path, home: Path) -> None:
    config = 'planner_model = "o1-pro"\nexecutor_model = "o1-pro"\nsummarizer_model = "o1-pro"\n'
    config += '[models]\nANALYSIS = "o1-pro"\n[prices.o1-pro]\ninput = 0\noutput = 0\n'
    settings, [warning] = settings_with(tmp_path, home, config)
    assert (settings.planner_model, settings.executor_model, settings.summarizer_model) == (None, None, None)
    assert settings.models == {} and settings.prices == {}
    for key in ("planner_model", "executor_model", "summarizer_model", "models", "prices"):
        assert key in warning
