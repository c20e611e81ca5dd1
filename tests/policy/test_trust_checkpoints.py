"""Checkpoints are a protection, the other direction of a spending limit (issue 27, finding 3): a
repository's own .paicli/config.toml may turn them on or raise their limits untrusted, but turning them off
or lowering a limit below the user's own value (or the default) needs trust; ignored, it is named in a
warning. The user's own ~/.paicli/config.toml may set them as the user likes."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.config import Settings
from paicli.config_sources import load_settings
from paicli.trust import TrustRequest

CONFIG = ".paicli/config.toml"
DEFAULTS = {
    "checkpoints": True,
    "checkpoints_keep": 50,
    "checkpoint_max_files": 50_000,
    "checkpoint_max_new_mb": 1_000.0,
    "checkpoint_max_file_mb": 5.0,
}
LOWERED = {
    "checkpoints": ("false", False),
    "checkpoints_keep": ("1", 1),
    "checkpoint_max_files": ("3", 3),
    "checkpoint_max_new_mb": ("0.001", 0.001),
    "checkpoint_max_file_mb": ("0.5", 0.5),
}  # key: (as written in the file, the value it gives once trusted)
RAISED = {
    "checkpoints": "true",
    "checkpoints_keep": "500",
    "checkpoint_max_files": "100000",
    "checkpoint_max_new_mb": "5000.5",
    "checkpoint_max_file_mb": "20",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)
    (folder / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\n")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "someone-elses-repo"
    (root / ".paicli").mkdir(parents=True)
    return root


def load(repo: Path, home: Path, repo_config: str, **options: object) -> tuple[Settings, list[str]]:
    (repo / CONFIG).write_text(repo_config)
    warnings: list[str] = []
    settings = load_settings(workspace=repo, env={}, home=home, warn=warnings.append, **options)  # type: ignore[arg-type]
    return settings, warnings


def checkpoint_settings(settings: Settings) -> dict[str, object]:
    return {key: getattr(settings, key) for key in DEFAULTS}


def assert_ignored_with_the_notice(warnings: list[str], repo: Path, *keys: str) -> None:
    [warning] = warnings
    for key in keys:
        assert f"ignoring {key} = " in warning or f", {key} = " in warning, warning
    assert str(repo / CONFIG) in warning and "takes your trust" in warning and "not trusted yet" in warning


@pytest.mark.parametrize("key", list(LOWERED))
def test_a_lowered_protection_is_ignored_untrusted_with_a_notice_naming_it(repo: Path, home: Path, key: str) -> None:
    written, _ = LOWERED[key]
    settings, warnings = load(repo, home, f"{key} = {written}\n")
    assert checkpoint_settings(settings) == DEFAULTS
    assert_ignored_with_the_notice(warnings, repo, key)
    assert f"(yours: {DEFAULTS[key]})" in warnings[0]


def test_all_of_them_at_once_are_one_notice(repo: Path, home: Path) -> None:
    config = "".join(f"{key} = {written}\n" for key, (written, _) in LOWERED.items())
    settings, warnings = load(repo, home, config)
    assert checkpoint_settings(settings) == DEFAULTS
    assert_ignored_with_the_notice(warnings, repo, *LOWERED)


def test_the_users_own_values_are_the_measure(repo: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("checkpoints_keep = 200\ncheckpoint_max_file_mb = 1\n")
    settings, warnings = load(repo, home, "checkpoints_keep = 100\ncheckpoint_max_file_mb = 2\n")
    assert settings.checkpoints_keep == 200  # under the user's 200, though over the default: ignored
    assert settings.checkpoint_max_file_mb == 2.0  # over the user's 1, though under the default: applies
    assert_ignored_with_the_notice(warnings, repo, "checkpoints_keep")
    assert "checkpoints_keep = 100 (yours: 200)" in warnings[0] and "checkpoint_max_file_mb" not in warnings[0]


def test_trusted_the_lowered_values_apply_and_the_question_shows_them(repo: Path, home: Path) -> None:
    config = "".join(f"{key} = {written}\n" for key, (written, _) in LOWERED.items())
    asked: list[TrustRequest] = []
    settings, warnings = load(repo, home, config, confirm_trust=lambda request: asked.append(request) or True)
    assert checkpoint_settings(settings) == {key: value for key, (_, value) in LOWERED.items()}
    assert warnings == []
    assert asked[0].values["checkpoints"] == "False (yours: True)"
    assert asked[0].values["checkpoints_keep"] == "1 (yours: 50)"
    remembered = load_settings(workspace=repo, env={}, home=home, warn=lambda message: pytest.fail(message))
    assert remembered.checkpoints is False and remembered.checkpoints_keep == 1


def test_declined_they_stay_the_users(repo: Path, home: Path) -> None:
    settings, warnings = load(repo, home, "checkpoints = false\n", confirm_trust=lambda request: False)
    assert settings.checkpoints is True
    assert_ignored_with_the_notice(warnings, repo, "checkpoints")


def test_raising_them_needs_no_trust(repo: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("checkpoints = false\ncheckpoints_keep = 5\n")
    settings, warnings = load(repo, home, "".join(f"{key} = {value}\n" for key, value in RAISED.items()))
    assert warnings == []
    assert checkpoint_settings(settings) == {
        "checkpoints": True,  # the repository turns them back on for itself
        "checkpoints_keep": 500,
        "checkpoint_max_files": 100_000,
        "checkpoint_max_new_mb": 5000.5,
        "checkpoint_max_file_mb": 20.0,
    }


def test_the_same_value_as_the_users_is_no_lowering(repo: Path, home: Path) -> None:
    settings, warnings = load(repo, home, "checkpoints = true\ncheckpoints_keep = 50\ncheckpoint_max_file_mb = 5\n")
    assert warnings == [] and checkpoint_settings(settings) == DEFAULTS


def test_the_users_own_config_may_lower_them(repo: Path, home: Path) -> None:
    config = "".join(f"{key} = {written}\n" for key, (written, _) in LOWERED.items())
    (home / ".paicli" / "config.toml").write_text(config)
    warnings: list[str] = []
    settings = load_settings(workspace=repo, env={}, home=home, warn=warnings.append)  # the repo has no config
    assert checkpoint_settings(settings) == {key: value for key, (_, value) in LOWERED.items()}
    at_home = load_settings(workspace=home, env={}, home=home, warn=warnings.append)  # home's .paicli is the user's
    assert at_home.checkpoints is False and warnings == []


def test_sessions_keep_stays_a_spending_limit(repo: Path, home: Path) -> None:
    lowered, quiet = load(repo, home, "sessions_keep = 1\n")
    assert lowered.sessions_keep == 1 and quiet == []
    raised, [warning] = load(repo, home, "sessions_keep = 1000\n")
    assert raised.sessions_keep == 100 and "sessions_keep = 1000 (yours: 100)" in warning
    assert "takes your trust" not in warning  # the spending limits' own notice


def test_a_protection_and_a_sensitive_key_get_a_notice_each(repo: Path, home: Path) -> None:
    settings, warnings = load(repo, home, 'approval = "yolo"\ncheckpoints = false\n')
    assert settings.approval is None and settings.checkpoints is True
    others, protections = warnings
    assert "ignoring approval from" in others and "checkpoints" not in others
    assert "ignoring checkpoints = False (yours: True)" in protections and "approval" not in protections


# ---- what an attacker might write instead ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "trusted"),
    [
        ("checkpoints = 0", False),  # TOML integer; pydantic reads 0 as False
        ("checkpoints = 0.0", False),
        ('checkpoints = "false"', False),  # strings pydantic reads as False
        ('checkpoints = "FALSE"', False),
        ('checkpoints = "off"', False),
        ('checkpoints = "no"', False),
        ('checkpoints = "0"', False),
        ('"checkpoints" = false', False),  # a quoted key is the same key
        ("checkpoints_keep = 0", "invalid setting checkpoints_keep"),  # under the minimum: a configuration
        ("checkpoints_keep = -5", "invalid setting checkpoints_keep"),  # error once trusted, ignored before
        ("checkpoint_max_files = -1", "invalid setting checkpoint_max_files"),
        ("checkpoint_max_new_mb = 0.0", "invalid setting checkpoint_max_new_mb"),
        ("checkpoint_max_file_mb = -inf", "invalid setting checkpoint_max_file_mb"),
        ("checkpoint_max_new_mb = nan", "invalid setting checkpoint_max_new_mb"),  # compares as nothing
        ('checkpoints_keep = "1"', 1),  # a number in a string is not compared: it needs trust
        ("checkpoints = {value = false}", "invalid setting checkpoints"),  # an inline table
        ("checkpoints.enabled = false", "invalid setting checkpoints"),  # a dotted key: a table too
        ("[checkpoints]\nenabled = false", "invalid setting checkpoints"),
    ],
)
def test_every_spelling_of_off_or_lower_is_ignored_untrusted(
    repo: Path, home: Path, line: str, trusted: object
) -> None:
    settings, warnings = load(repo, home, line + "\n")
    assert checkpoint_settings(settings) == DEFAULTS
    [warning] = warnings
    assert "takes your trust" in warning and str(repo / CONFIG) in warning
    [(key, value)] = tomllib.loads(line).items()
    uncompared = "not a number or true/false counts as lowering"
    assert (uncompared in warning) is not isinstance(value, int | float)
    if isinstance(trusted, str):  # trusted, the value is checked like any other
        with pytest.raises(ConfigError, match=trusted):
            load(repo, home, line + "\n", confirm_trust=lambda request: True)
    else:
        applied, _ = load(repo, home, line + "\n", confirm_trust=lambda request: True)
        assert getattr(applied, key) == trusted


def test_a_string_is_shown_quoted_in_the_notice(repo: Path, home: Path) -> None:
    _, [warning] = load(repo, home, 'checkpoints = "false"\n')
    assert 'ignoring checkpoints = "false" (yours: True)' in warning


@pytest.mark.parametrize("line", ["Checkpoints = false", "CHECKPOINTS = false", "checkpoint = false"])
def test_another_casing_is_no_setting_at_all(repo: Path, home: Path, line: str) -> None:
    """TOML keys are case-sensitive and a config's keys are checked: paicli refuses to start, undo stays on."""
    with pytest.raises(ConfigError, match=f"unknown setting {line.split()[0]}"):
        load(repo, home, line + "\n")


def test_a_key_written_twice_is_no_toml(repo: Path, home: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load(repo, home, "checkpoints = true\ncheckpoints = false\n")
