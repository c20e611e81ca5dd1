from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.config import Settings
from paicli.config_sources import load_settings
from paicli.trust import TrustStore, read_repo_file
from tests.conftest import unexpected_warning


def write_toml(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_flags_beat_env_beat_workspace_file_beat_home_file(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write_toml(home / ".paicli" / "config.toml", 'model = "home"\nmax_parallel = 7\nmax_steps = 5\ntemperature = 0.1')
    # The workspace lowers max_steps (a repository may lower a spending limit untrusted; raising it, or
    # choosing the model, needs trust: see tests/policy/test_trust.py).
    write_toml(ws / ".paicli" / "config.toml", 'model = "workspace"\nmax_parallel = 3\nmax_steps = 4')
    env = {"PAICLI_MODEL": "env", "PAICLI_MAX_PARALLEL": "2"}
    s = load_settings({"model": "flag"}, workspace=ws, env=env, home=home, warn=lambda m: None)
    assert (s.model, s.max_parallel, s.max_steps, s.temperature) == ("flag", 2, 4, 0.1)
    assert s.workspace == ws.resolve()


def test_paicli_variables_win_over_openai_ones(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "PAICLI_API_KEY": "sk-paicli", "OPENAI_BASE_URL": "http://o/v1"}
    s = load_settings(workspace=tmp_path, env=env, home=tmp_path, warn=unexpected_warning)
    assert s.require_key() == "sk-paicli"
    assert s.base_url == "http://o/v1"


def test_replan_limit_from_environment(tmp_path: Path) -> None:
    s = load_settings(workspace=tmp_path, env={"PAICLI_PLAN_MAX_REPLANS": "0"}, home=tmp_path, warn=unexpected_warning)
    assert s.max_replans == 0


def test_missing_key_names_the_variables(tmp_path: Path) -> None:
    s = load_settings(workspace=tmp_path, env={}, home=tmp_path, warn=unexpected_warning)
    with pytest.raises(ConfigError, match=r"PAICLI_API_KEY.*OPENAI_API_KEY"):
        s.require_key()


def test_key_never_shows_in_repr_or_dump(tmp_path: Path) -> None:
    s = load_settings(
        workspace=tmp_path, env={"PAICLI_API_KEY": "sk-very-secret"}, home=tmp_path, warn=unexpected_warning
    )
    assert "sk-very-secret" not in repr(s)
    assert "sk-very-secret" not in s.model_dump_json()


@pytest.mark.parametrize(
    "text, message",
    [
        ("max_parallel = 0", "max_parallel"),
        ("nonsense = 1", "unknown setting"),
        ("model = ", "cannot read"),
        ('schedule = "random"', "schedule"),
        ("rate_limit_wait = -5", "rate_limit_wait: Input should be greater than or equal to 0"),
    ],
)
def test_bad_config_file_gives_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    write_toml(tmp_path / ".paicli" / "config.toml", text)
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(workspace=tmp_path, env={}, home=tmp_path / "nohome", warn=unexpected_warning)
    assert "\n" not in str(err.value)


def test_workspace_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        load_settings(workspace=tmp_path / "missing", env={}, home=tmp_path, warn=unexpected_warning)


@pytest.mark.parametrize("text", ["deny = " + "[" * 5000 + "]" * 5000, "x = " + "{a = " * 3000 + "1" + "}" * 3000])
def test_deeply_nested_config_is_a_one_line_error(tmp_path: Path, text: str) -> None:
    write_toml(tmp_path / ".paicli" / "config.toml", text)
    with pytest.raises(ConfigError, match="nested too deeply") as err:
        load_settings(workspace=tmp_path, env={}, home=tmp_path / "nohome", warn=lambda m: None)
    assert "\n" not in str(err.value)


def test_the_users_own_config_may_be_a_symlink_but_not_a_fifo(tmp_path: Path) -> None:
    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    write_toml(dotfiles / "paicli.toml", "max_steps = 7\n")
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "config.toml").symlink_to(dotfiles / "paicli.toml")
    assert load_settings(workspace=tmp_path, env={}, home=home, warn=unexpected_warning).max_steps == 7
    (home / ".paicli" / "config.toml").unlink()
    os.mkfifo(home / ".paicli" / "config.toml")
    with pytest.raises(ConfigError, match="is a FIFO, not a regular file"):
        load_settings(workspace=tmp_path, env={}, home=home, warn=unexpected_warning)


# ---- model routing and prices --------------------------------------------------------------------------


ROUTING = """
planner_model = "plan-model"
executor_model = "exec-model"
summarizer_model = "sum-model"

[models]
analysis = "deep-model"
File-Read = "cheap-model"

[prices."deep-model"]
input = 0.55
output = 2.19

[prices.cheap-model]
input = 0
output = 0.5
"""


def test_model_routing_settings_and_prices_are_read_from_the_config(tmp_path: Path) -> None:
    write_toml(tmp_path / "home" / ".paicli" / "config.toml", ROUTING)
    s = load_settings(workspace=tmp_path, env={}, home=tmp_path / "home", warn=unexpected_warning)
    assert (s.planner_model, s.executor_model, s.summarizer_model) == ("plan-model", "exec-model", "sum-model")
    assert s.models == {"ANALYSIS": "deep-model", "FILE_READ": "cheap-model"}  # type names, any case
    assert s.prices["deep-model"].input == 0.55 and s.prices["deep-model"].output == 2.19
    assert s.prices["cheap-model"].cost(1_000_000, 2_000_000) == 1.0


def test_models_and_prices_merge_entry_by_entry_across_the_two_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_toml(home / ".paicli" / "config.toml", ROUTING)
    write_toml(tmp_path / "ws" / ".paicli" / "config.toml", '[models]\nANALYSIS = "other"\n')
    repo_file = read_repo_file((tmp_path / "ws").resolve(), ".paicli/config.toml")
    assert repo_file is not None
    TrustStore(home).trust(repo_file)  # a repository's models apply once the user trusts its config
    s = load_settings(workspace=tmp_path / "ws", env={}, home=home, warn=unexpected_warning)
    assert s.models == {"ANALYSIS": "other", "FILE_READ": "cheap-model"}
    assert set(s.prices) == {"deep-model", "cheap-model"}


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[models]\nANALYSYS = "x"',
            r"\[models\]: unknown task type 'ANALYSYS' \(the types are FILE_READ, FILE_WRITE, "
            r"COMMAND, ANALYSIS, VERIFICATION\)",
        ),
        ('[models]\n"bad\\nname" = "x"', r"unknown task type 'bad\\nname'"),
        ('[models]\nanalysis = "x"\nANALYSIS = "y"', "ANALYSIS is set twice"),
        ('[models]\nANALYSIS = ""', "models.ANALYSIS"),
        ('[models]\nANALYSIS = "two words"', "models.ANALYSIS"),
        ("[models]\nANALYSIS = 3", "models.ANALYSIS"),
        ("models = 3", "models"),
        ('planner_model = ""', "planner_model"),
        ("[prices.m]\ninput = -1\noutput = 1", r"prices\.m\.input: .*greater than or equal to 0"),
        ('[prices.m]\ninput = "0.27"\noutput = 1', r"prices\.m\.input: .*valid number"),
        ("[prices.m]\ninput = true\noutput = 1", r"prices\.m\.input: .*valid number"),
        ("[prices.m]\ninput = inf\noutput = 1", r"prices\.m\.input: .*finite number"),
        ("[prices.m]\ninput = 1\noutput = 1\ncached = 0.1", r"prices\.m\.cached: Extra inputs"),
        ("prices = 1", "prices"),
    ],
)
def test_bad_routing_or_prices_are_one_line_configuration_errors(tmp_path: Path, text: str, message: str) -> None:
    write_toml(tmp_path / "home" / ".paicli" / "config.toml", text)
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(workspace=tmp_path, env={}, home=tmp_path / "home", warn=unexpected_warning)
    assert "\n" not in str(err.value)


def test_an_unknown_task_type_is_refused_whatever_the_source() -> None:
    with pytest.raises(ValueError, match="unknown task type 'review'"):
        Settings.model_validate({"models": {"review": "x"}})


def test_the_home_folder_is_home_when_set_else_the_accounts(tmp_path: Path) -> None:
    from paicli.config import user_home

    assert user_home({"HOME": str(tmp_path)}) == tmp_path
    assert user_home({"HOME": ""}) == Path.home()  # an empty HOME is not the current folder
    assert user_home({}) == Path.home()


def test_sandbox_settings_come_from_the_users_config_and_lists_add_up(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    write_toml(
        home / ".paicli" / "config.toml",
        'sandbox = "bwrap"\nsandbox_network = true\nsandbox_writable = ["~/.m2"]\nunsandboxed = ["git push"]\n',
    )
    write_toml(ws / ".paicli" / "config.toml", 'unsandboxed = ["git commit"]\nsandbox_hide = ["/srv/keys"]\n')
    repo_file = read_repo_file(ws.resolve(), ".paicli/config.toml")
    assert repo_file is not None
    TrustStore(home).trust(repo_file)
    s = load_settings(workspace=ws, env={}, home=home, warn=unexpected_warning)
    assert (s.sandbox, s.sandbox_network, s.sandbox_writable) == ("bwrap", True, ["~/.m2"])
    assert s.unsandboxed == ["git push", "git commit"] and s.sandbox_hide == ["/srv/keys"]
    assert load_settings({"sandbox": "off"}, workspace=ws, env={}, home=home, warn=unexpected_warning).sandbox == "off"
    assert (
        load_settings(workspace=tmp_path, env={}, home=tmp_path / "nohome", warn=unexpected_warning).sandbox == "auto"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ('sandbox = "docker"', "invalid setting sandbox"),
        ('sandbox_writable = ["relative/dir"]', "not an absolute path or one starting with ~/"),
        ('sandbox_hide = ["~"]', "whole filesystem or home folder"),
        ('sandbox_writable = ["/"]', "whole filesystem or home folder"),
        ('unsandboxed = ["git push && rm -rf x"]', "holds shell operators"),
        ('unsandboxed = ["read_file"]', "not a command prefix"),
    ],
)
def test_bad_sandbox_settings_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    write_toml(tmp_path / "home" / ".paicli" / "config.toml", text)
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(workspace=tmp_path, env={}, home=tmp_path / "home", warn=unexpected_warning)
    assert "\n" not in str(err.value)
