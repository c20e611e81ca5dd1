"""paicli/__init__.py keeps httpx from importing its command-line tool (issue 16: ~50 ms of every start)."""

from __future__ import annotations

import json
import subprocess
import sys

CLI_ONLY = ("httpx._main", "click", "pygments", "rich.syntax", "rich.progress")


def loaded_after(statement: str) -> dict[str, bool]:
    code = (
        "import json, sys\n"
        f"{statement}\n"
        f"print(json.dumps({{name: sys.modules.get(name) is not None for name in {list(CLI_ONLY)!r}}}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return dict(json.loads(done.stdout))


def test_httpx_imports_its_command_line_tool_when_nothing_stops_it() -> None:
    # The premise: click is installed (mcp brings it), so plain httpx pays for its CLI.
    assert loaded_after("import httpx") == dict.fromkeys(CLI_ONLY, True)


def test_paicli_s_client_loads_httpx_without_its_command_line_tool() -> None:
    assert loaded_after("import paicli.llm.client") == dict.fromkeys(CLI_ONLY, False)


def test_httpx_still_works_and_its_main_is_the_stub() -> None:
    code = "import paicli, httpx; print(httpx.Client, httpx.AsyncClient, httpx.main.__module__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split()[-1] == "httpx"
