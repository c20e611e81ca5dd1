"""Reading a configuration file."""

import configparser
from pathlib import Path

from appconf.convert import CONVERTERS
from appconf.errors import ConfigError
from appconf.schema import FIELDS


class Config:
    def __init__(self, values):
        self._values = values

    def get(self, section, key):
        return self._values[section][key]


def load(path: Path) -> Config:
    values = {section: {key: default for key, (_, default) in keys.items()} for section, keys in FIELDS.items()}
    parser = configparser.ConfigParser()
    if path.exists():
        parser.read_string(path.read_text(encoding="utf-8"))
    for section in parser.sections():
        for key, text in parser.items(section):
            if section not in FIELDS or key not in FIELDS[section]:
                raise ConfigError(f"{path}: unknown setting [{section}] {key}")
            kind = FIELDS[section][key][0]
            try:
                values[section][key] = CONVERTERS[kind](text)
            except ValueError as err:
                raise ConfigError(f"{path}: [{section}] {key}: {err}") from None
    return Config(values)
