"""paicli talks HTTP through httpx2 alone (the stack mcp brings too): no second HTTP stack is loaded, and
none of httpx's command-line tool (click, pygments) with it."""

from __future__ import annotations

import json
import subprocess
import sys

NOT_LOADED = ("httpx", "httpcore", "certifi", "click", "pygments")


def test_the_model_client_loads_httpx2_and_no_other_http_stack() -> None:
    code = (
        "import json, sys\nimport paicli.llm.client, paicli.llm.probe, paicli.doctor\n"
        f"print(json.dumps({{name: name in sys.modules for name in {[*NOT_LOADED, 'httpx2']!r}}}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout) == {**dict.fromkeys(NOT_LOADED, False), "httpx2": True}
