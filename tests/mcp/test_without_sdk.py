"""The MCP SDK is the extra `paicli[mcp]`: without it paicli works, and a configured server gets one line
that names the extra. The package is made missing for real: the paicli process runs with an import
blocker first on sys.meta_path (it survives the secret hand-off's restart: same arguments)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import paicli_env
from tests.fakellm import FakeLLM, Reply
from tests.mcp.conftest import pids, server_toml

WITHOUT_MCP = """
import importlib.abc, sys

class NoMcp(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "mcp":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoMcp())
from paicli.process_exit import entry
sys.exit(entry())
"""


def test_a_configured_server_without_the_sdk_is_one_line_naming_the_extra(
    fake: FakeLLM, workspace: Path, home: Path, marks: Path
) -> None:
    with (home / ".paicli" / "config.toml").open("a") as config:
        config.write(server_toml("tracker", marks) + server_toml("off", marks, enabled=False))
    fake.on("hi", Reply.text("hello"))
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_MCP, "-C", str(workspace), "run", "hi"],
        env=paicli_env(fake, home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0 and done.stdout.strip() == "hello", done.stderr
    lines = [line for line in done.stderr.splitlines() if "MCP" in line]
    assert lines == [
        "paicli: MCP servers are configured (tracker), but the MCP SDK is not installed: pip install 'paicli[mcp]'"
    ]
    assert pids(marks) == []  # nothing was started
    assert not any(tool["function"]["name"].startswith("mcp__") for tool in fake.requests[0].body["tools"])
