"""4. DAG operations: validate + topological order + levels + critical path, on graphs of growing size.

Measured two ways in the same rounds: the four functions called one after the other, and `dag.analyse`,
which does all four in one pass over integer ids (what the plan view and the parser use). The target
(issue 16) is analyse ≤ 1.5 × one graphlib sort of the same graph.

Random DAGs of 1,000, 10,000 and 100,000 tasks, each depending on about 3 random earlier tasks
(Poisson, so E ≈ 3 V), listed in shuffled order; and a chain of 10,000 (the deepest possible graph:
nothing may recurse); and the plan contract's check of 10,000 writers (issue 29: each path's writers
must form a chain, checked without comparing pairs; at most 1 s, wall time). Other times are CPU time
(the medians of several rounds), so other processes on a shared machine count less.

Growth: time(10 V) ÷ time(V); linear is 10, V log V about 12 to 13. But a graph of 10,000 or 100,000
tasks no longer fits the CPU caches, and on a small virtual machine every dictionary lookup then costs
several times more. The same run therefore also times a known linear-time algorithm on the same graph,
the standard library's `graphlib.TopologicalSorter(graph).static_order()`, and reports the growth of
our time relative to it: near 1 means our operations scale like a linear algorithm does on this
machine, and the rest of the raw growth is the memory system.
"""

from __future__ import annotations

import graphlib
import itertools
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Result, median, rounded
from bench.graphs import Graph, chain, random_dag
from paicli.plan import dag
from paicli.plan.contract import Contract
from paicli.plan.model import Plan, Task, TaskType
from paicli.tools.toolbox import builtin_tool

NAME = "dag"
TITLE = "DAG operations"


def run(quick: bool = False) -> Result:
    sizes = [100, 1000] if quick else [1000, 10_000, 100_000]
    chain_length = 1000 if quick else 10_000
    result = Result(NAME, TITLE)
    totals: dict[int, float] = {}
    ratios: dict[int, float] = {}
    for size in sizes:
        graph = random_dag(size, 3.0, seed=size)
        rounds = 3 if size >= 100_000 else 7 if size >= 10_000 else 15  # small sizes are quick and noisier
        totals[size], ratios[size] = _measure(result, f"random {size:,}", graph, rounds=rounds)
        result.add(f"random {size:,}: all four", totals[size] * 1000, "ms")
        details = result.details[f"random {size:,}"]
        result.add(f"random {size:,}: analyse (one pass)", details["analyse_ms"], "ms")
        result.add(f"random {size:,}: analyse ÷ graphlib", details["analyse_per_graphlib"], at_most=1.5)
    chain_total, _ = _measure(result, f"chain {chain_length:,}", chain(chain_length), rounds=5)
    result.add(f"chain {chain_length:,}: all four", chain_total * 1000, "ms")
    _contract(result, 1000 if quick else 10_000)
    for smaller, larger in itertools.pairwise(sizes):
        result.add(f"growth {larger:,} ÷ {smaller:,}, raw", totals[larger] / totals[smaller])
        relative = ratios[larger] / ratios[smaller]
        result.add(f"growth {larger:,} ÷ {smaller:,}, relative to graphlib", relative, at_most=1.5)
    return result


def _operations(graph: Graph, durations: dict[str, float]) -> dict[str, Callable[[], object]]:
    return {
        "validate": lambda: dag.validate(graph),
        "topological_order": lambda: dag.topological_order(graph),
        "levels": lambda: dag.levels(graph),
        "critical_path": lambda: dag.critical_path(graph, durations),
    }


def _contract(result: Result, size: int) -> None:
    """The plan contract's check of a plan of `size` FILE_WRITE tasks (issue 29: at most 1 s for 10,000):
    a chain of writers of one file, writers of files of their own in 100 folders, and a plan from before
    contracts where every other writer declares nothing (each ordered with every writer: `accept_legacy`).
    Wall time, the workspace's paths really resolved; the median of three rounds."""
    shapes: dict[str, Callable[[int], tuple[list[str] | None, list[str]]]] = {
        "chain of writers of one file": lambda i: (["a.txt"], [f"t{i - 1}"] if i else []),
        "writers apart": lambda i: ([f"d{i % 100}/f{i}.txt"], []),
        "half declaring nothing (legacy)": lambda i: (None if i % 2 else [f"d{i % 100}/f{i}.txt"], []),
    }
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "a.txt").write_text("a\n")
        for name, shape in shapes.items():
            samples, problems = [], 0
            for _ in range(3):
                tasks = [
                    Task(
                        id=f"t{i}",
                        description="w",
                        type=TaskType.FILE_WRITE,
                        files=shape(i)[0],
                        dependencies=shape(i)[1],
                    )
                    for i in range(size)
                ]
                plan = Plan(goal="g", tasks=tasks)
                start = time.perf_counter()
                contract = Contract(workspace, builtin_tool)
                problems = len(contract.problems(plan, require_files=False))
                contract.accept_legacy(plan)
                samples.append(time.perf_counter() - start)
            label = f"plan contract, {size:,} tasks, {name}"
            result.details[label] = {"tasks": size, "problems": problems, "seconds": [rounded(v) for v in samples]}
            result.add(label, median(samples), "s", at_most=1.0)


def _reference(graph: Graph) -> object:
    return list(graphlib.TopologicalSorter(graph).static_order())


def _cpu_seconds(operation: Callable[[], object]) -> float:
    start = time.process_time()
    operation()
    return time.process_time() - start


def _measure(result: Result, label: str, graph: Graph, *, rounds: int) -> tuple[float, float]:
    """The four operations' total CPU seconds and that total ÷ the reference algorithm's time, both the
    median over rounds. Every round times all of them back to back, so a ratio shares the machine's state."""
    rng = random.Random(len(graph))
    durations = {task: rng.uniform(0.1, 2.0) for task in graph}
    operations = _operations(graph, durations)
    samples: dict[str, list[float]] = {name: [] for name in [*operations, "graphlib", "analyse"]}
    totals, ratios, one_pass = [], [], []
    for _ in range(rounds):
        for name, operation in operations.items():
            samples[name].append(_cpu_seconds(operation))
        samples["graphlib"].append(_cpu_seconds(lambda: _reference(graph)))
        samples["analyse"].append(_cpu_seconds(lambda: dag.analyse(graph, durations)))
        totals.append(sum(samples[name][-1] for name in operations))
        ratios.append(totals[-1] / samples["graphlib"][-1])
        one_pass.append(samples["analyse"][-1] / samples["graphlib"][-1])
    result.details[label] = {
        "tasks": len(graph),
        "edges": sum(len(deps) for deps in graph.values()),
        "rounds": rounds,
        **{f"{name}_ms": rounded(median(values) * 1000) for name, values in samples.items()},
        "all_four_per_graphlib": rounded(median(ratios)),
        "analyse_per_graphlib": rounded(median(one_pass)),
    }
    return median(totals), median(ratios)
