"""The documentation stays true to the code: docs/configuration.md is what its generator writes from
paicli/config.py, and every link and every repository path the Markdown files name leads somewhere."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "docs" / "generate_configuration.py"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_configuration", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_reference_is_generated_from_the_settings_model() -> None:
    generator = load_generator()
    current = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert current == generator.generated(), (
        "docs/configuration.md differs from the Settings model in paicli/config.py: "
        "run `python docs/generate_configuration.py` and commit the result"
    )


def test_every_setting_is_described() -> None:
    from paicli.config import Settings

    undescribed = [name for name, info in Settings.model_fields.items() if not info.description]
    assert not undescribed, f"add Field(description=...) in paicli/config.py for {', '.join(undescribed)}"
