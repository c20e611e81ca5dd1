"""10. Sandbox start overhead: what bubblewrap adds to starting one command.

`bash -c true` run bare and run under the sandbox's real options (paicli/sandbox/bwrap.py, for a
throw-away workspace and home: every namespace, the mounts, `--as-pid-1`), the two alternating, each
run a fresh process as execute_command starts it (a new session, stdin from /dev/null, output piped).
p50 and p99 of each, and the overhead: the difference of the p50s (target ≤ 15 ms) and of the p99s.
Where bubblewrap does not work the benchmark says why instead of timing.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import Result, percentile, rounded
from paicli.sandbox import Containment, choose_sandbox

NAME = "sandbox"
TITLE = "Sandbox start overhead per command"
TARGET_MS = 15.0


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        check=True,
    )
    return (time.perf_counter() - start) * 1000


def run(quick: bool = False) -> Result:
    rounds = 10 if quick else 300
    result = Result(NAME, TITLE, details={"rounds": rounds})
    with tempfile.TemporaryDirectory(prefix="paicli-bench-sandbox-") as folder:
        workspace, home = Path(folder, "ws"), Path(folder, "home")
        workspace.mkdir()
        home.mkdir()
        choice = choose_sandbox("auto", workspace=workspace, home=home)
        if choice.sandbox is None:
            result.add("bubblewrap", f"not measured: {choice.problem}")
            return result
        env = dict(os.environ)
        bare = ["bash", "-c", "true"]
        contained, contained_env = choice.sandbox.command(bare, env, Containment(workspace))
        _once(bare, env), _once(contained, contained_env)  # warm the page cache
        bare_ms, contained_ms = [], []
        for _ in range(rounds):
            bare_ms.append(_once(bare, env))
            contained_ms.append(_once(contained, contained_env))
    p50 = percentile(contained_ms, 50) - percentile(bare_ms, 50)
    p99 = percentile(contained_ms, 99) - percentile(bare_ms, 99)
    result.add("bare bash -c true p50", rounded(percentile(bare_ms, 50), 3), "ms")
    result.add("bare bash -c true p99", rounded(percentile(bare_ms, 99), 3), "ms")
    result.add("in bubblewrap p50", rounded(percentile(contained_ms, 50), 3), "ms")
    result.add("in bubblewrap p99", rounded(percentile(contained_ms, 99), 3), "ms")
    result.add("overhead p50 (beyond bare)", rounded(p50, 3), "ms", at_most=TARGET_MS)
    result.add("overhead p99 (beyond bare)", rounded(p99, 3), "ms")
    result.details.update(bare_ms=[rounded(v, 3) for v in bare_ms], contained_ms=[rounded(v, 3) for v in contained_ms])
    return result
