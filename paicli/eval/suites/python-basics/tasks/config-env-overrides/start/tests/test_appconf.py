import pytest

from appconf.errors import ConfigError
from appconf.loader import load


def test_defaults_and_file(tmp_path):
    path = tmp_path / "app.ini"
    path.write_text("[server]\nport = 9000\ndebug = yes\n")
    config = load(path)
    assert config.get("server", "port") == 9000 and config.get("server", "debug") is True
    assert config.get("server", "host") == "127.0.0.1" and config.get("storage", "max_mb") == 100


def test_file_errors(tmp_path):
    path = tmp_path / "app.ini"
    path.write_text("[server]\nport = lots\n")
    with pytest.raises(ConfigError, match="port"):
        load(path)
    path.write_text("[server]\ncolour = red\n")
    with pytest.raises(ConfigError, match="colour"):
        load(path)
