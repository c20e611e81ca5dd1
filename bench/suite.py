"""The benchmarks in their order, and running a selection of them."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType

from bench import (
    checkpoints,
    context,
    dag_ops,
    dispatch,
    evalrun,
    evalsuite,
    fuzz_shell,
    grep,
    keys,
    long_chat,
    makespan,
    memory,
    overhead,
    parse_robustness,
    render,
    request_path,
    sandbox,
    shell_diff,
    soak,
    startup,
    streamplan,
    tokens,
)
from bench.common import Result

ORDER = (
    makespan,
    dispatch,
    request_path,
    overhead,
    dag_ops,
    parse_robustness,
    tokens,
    long_chat,
    startup,
    render,
    memory,
    shell_diff,
    fuzz_shell,
    checkpoints,
    sandbox,
    soak,
    keys,
    grep,
    context,
    streamplan,
    evalrun,
    evalsuite,
)
BENCHMARKS: dict[str, ModuleType] = {module.NAME: module for module in ORDER}


def run_benchmarks(
    names: Sequence[str], *, quick: bool = False, progress: Callable[[str], None] | None = None
) -> list[Result]:
    """Runs the named benchmarks (all when `names` is empty) in suite order."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    chosen = [name for name in BENCHMARKS if not names or name in names]
    results = []
    for name in chosen:
        module = BENCHMARKS[name]
        say(f"· {name}: {module.TITLE} …")
        start = time.perf_counter()
        result: Result = module.run(quick=quick)
        result.seconds = round(time.perf_counter() - start, 2)
        say(f"  done in {result.seconds:.1f} s")
        results.append(result)
    return results
