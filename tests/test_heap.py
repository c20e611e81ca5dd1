"""paicli/heap.py: once the runtime is built, what exists is out of the cyclic collector's passes (the
slowest dispatches of a plan were its full passes over every module and schema); later garbage is still
collected. Run in a fresh interpreter: freezing is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, json, sys
from pydantic import SecretStr
from paicli.config import Settings
from paicli.events import ListSink
from paicli.runtime import build_runtime

before = gc.get_freeze_count()
settings = Settings(workspace=sys.argv[1], api_key=SecretStr("k"), base_url="http://127.0.0.1:9/v1", model="m")
runtime = build_runtime(settings, ListSink())
frozen = gc.get_freeze_count()

class Cycle:
    pass

def make_cycles(count):
    for _ in range(count):
        a, b = Cycle(), Cycle()
        a.other, b.other = b, a

make_cycles(1000)
gc.collect()
alive = sum(isinstance(o, Cycle) for o in gc.get_objects())
print(json.dumps({"before": before, "frozen": frozen, "cycles_alive": alive}))
"""


def test_building_the_runtime_freezes_what_exists_and_later_cycles_are_still_collected(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True, timeout=60
    )
    figures = json.loads(done.stdout)
    assert figures["before"] == 0
    assert figures["frozen"] > 10_000  # the modules, pydantic's schemas, the runtime
    assert figures["cycles_alive"] == 0  # the 1,000 cycles made afterwards were collected
