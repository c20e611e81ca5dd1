import pytest

from appconf.errors import ConfigError
from appconf.loader import load


def test_env_overrides_file_and_defaults(tmp_path):
    path = tmp_path / "app.ini"
    path.write_text("[server]\nport = 9000\nhost = example.org\n")
    config = load(path, env={"APPCONF_SERVER_PORT": "7000", "APPCONF_STORAGE_MAX_MB": " 5 ", "HOME": "/x"})
    assert config.get("server", "port") == 7000 and config.get("storage", "max_mb") == 5
    assert config.get("server", "host") == "example.org"
    assert config.source_of("server", "port") == "env"
    assert config.source_of("server", "host") == "file"
    assert config.source_of("server", "debug") == "default"


def test_bad_env_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="APPCONF_SERVER_DEBUG"):
        load(tmp_path / "none.ini", env={"APPCONF_SERVER_DEBUG": "maybe"})


def test_unknown_variable_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="APPCONF_SERVER_COLOUR"):
        load(tmp_path / "none.ini", env={"APPCONF_SERVER_COLOUR": "red"})


def test_os_environ_is_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("APPCONF_SERVER_HOST", "env.example")
    assert load(tmp_path / "none.ini").get("server", "host") == "env.example"
