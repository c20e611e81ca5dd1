"""Reading a configuration file, then the environment."""

import configparser
import os
from pathlib import Path

from appconf.convert import CONVERTERS
from appconf.errors import ConfigError
from appconf.schema import FIELDS

PREFIX = "APPCONF_"


class Config:
    def __init__(self, values, sources):
        self._values, self._sources = values, sources

    def get(self, section, key):
        return self._values[section][key]

    def source_of(self, section, key):
        return self._sources.get((section, key), "default")


def load(path: Path, env=None) -> Config:
    env = os.environ if env is None else env
    values = {section: {key: default for key, (_, default) in keys.items()} for section, keys in FIELDS.items()}
    sources = {}
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
            sources[(section, key)] = "file"
    names = {f"{PREFIX}{s}_{k}".upper(): (s, k) for s, keys in FIELDS.items() for k in keys}
    for variable, text in env.items():
        if not variable.startswith(PREFIX):
            continue
        if variable not in names:
            raise ConfigError(f"{variable}: names no setting")
        section, key = names[variable]
        try:
            values[section][key] = CONVERTERS[FIELDS[section][key][0]](text)
        except ValueError as err:
            raise ConfigError(f"{variable}: {err}") from None
        sources[(section, key)] = "env"
    return Config(values, sources)
