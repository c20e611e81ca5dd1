"""`--sandbox-hide PATH`, before or after the subcommand, any number of times: every path given adds to the
setting `sandbox_hide` (none is lost to argparse copying a subcommand's values over the main parser's)."""

from __future__ import annotations

from pathlib import Path

from paicli.cli import build_parser, settings_flags
from paicli.config_sources import load_settings
from tests.conftest import unexpected_warning


def test_every_hidden_path_adds_up_wherever_it_is_given(tmp_path: Path) -> None:
    argv = ["--sandbox-hide", "/a", "run", "x", "--sandbox-hide", "/b", "--sandbox-hide", "/c"]
    flags = settings_flags(build_parser().parse_args(argv))
    assert flags["sandbox_hide"] == ["/a", "/b", "/c"]
    home = tmp_path / "home"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "config.toml").write_text('sandbox_hide = ["~/.secret"]\n')
    settings = load_settings(flags, workspace=tmp_path, env={}, home=home, warn=unexpected_warning)
    assert settings.sandbox_hide == ["~/.secret", "/a", "/b", "/c"]
    assert "sandbox_hide" not in settings_flags(build_parser().parse_args(["run", "x"]))
