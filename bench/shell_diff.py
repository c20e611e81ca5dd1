"""9. The command classifier against bash: the differential run of tests/security/test_differential.py at
scale. Seeded commands that try to hide a payload (comments, here-documents, quotes, substitutions, line
continuations, carriage returns, globs over hostile file names) are classified; every one called SAFE
runs for real with `bash -c` in a throwaway copy of a workspace with canaries and a canary folder
outside it. A SAFE command that changed anything is a false SAFE (target 0). Then command lines with
marker commands run whole (whatever their verdict, unless OPAQUE or DENY): every marker bash runs must
be one the walk reached (target 0 missed). Also the classification time per command (parse, denylist,
classifier), the part every `execute_command` call pays.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.common import Result, percentile, rounded
from paicli.policy.classify import Risk, classify_command
from paicli.shell.parse import _parse_nested
from tests.security.shellgen import MARKERS, generate, hidden_commands, make_template, run_case

NAME = "shelldiff"
TITLE = "Command classifier against bash"
SEED = 1919


def run(*, quick: bool = False) -> Result:
    cases = 60 if quick else 6000
    hiding_cases = 20 if quick else 2000
    result = Result(NAME, TITLE)
    rng = random.Random(SEED)
    risks: Counter[str] = Counter()
    false_safe: list[dict[str, object]] = []
    timings: list[float] = []
    with tempfile.TemporaryDirectory(prefix="paicli-shelldiff-") as folder:
        template = make_template(Path(folder))
        for _ in range(cases):
            command = generate(rng)
            _parse_nested.cache_clear()  # time a cold parse, as for a command seen the first time
            start = time.perf_counter()
            classify_command(command, template / "ws")
            timings.append(time.perf_counter() - start)
            outcome = run_case(command, template, Path(folder) / "scratch")
            risks[outcome.risk.name] += 1
            if outcome.changed:
                false_safe.append({"command": command, "changed": outcome.changed})
        checked = 0
        hidden: list[dict[str, object]] = []
        for _ in range(hiding_cases):
            command = generate(rng, MARKERS)
            missed = hidden_commands(command, template, Path(folder) / "scratch")
            checked += missed is not None
            if missed:
                hidden.append({"command": command, "hidden": missed})
    result.add("commands generated", cases)
    result.add("called SAFE, run for real", risks[Risk.SAFE.name])
    result.add("called ASK / OPAQUE / DENY", f"{risks['ASK']} / {risks['OPAQUE']} / {risks['DENY']}")
    result.add("false SAFE (changed a file)", len(false_safe), at_most=0)
    result.add("command lines run whole, marker commands", checked)
    result.add("commands bash ran that the walk missed", len(hidden), at_most=0)
    result.add("classification p50", rounded(percentile(timings, 50) * 1000), "ms")
    result.add("classification p99", rounded(percentile(timings, 99) * 1000), "ms")
    result.details = {
        "seed": SEED,
        "cases": cases,
        "risks": dict(risks),
        "false_safe": false_safe[:50],
        "hiding_cases": hiding_cases,
        "checked": checked,
        "hidden": hidden[:50],
    }
    return result
