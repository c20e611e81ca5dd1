"""The suites that ship inside the package (paicli/eval/suites/NAME/suite.toml), found by name.

They are package data, read where the package is installed: the runner must keep that folder (hidden
tests included) out of the agent's sandbox, like any suite file."""

from __future__ import annotations

from pathlib import Path

SUITES_DIR = Path(__file__).resolve().parent / "suites"
SUITE_FILE = "suite.toml"


def builtin_suites() -> dict[str, Path]:
    """Name -> suite file of every built-in suite."""
    if not SUITES_DIR.is_dir():
        return {}
    return {
        folder.name: folder / SUITE_FILE for folder in sorted(SUITES_DIR.iterdir()) if (folder / SUITE_FILE).is_file()
    }


def builtin_suite(name: str) -> Path | None:
    """The suite file of the built-in suite `name`, or None when there is none of that name."""
    return builtin_suites().get(name)
