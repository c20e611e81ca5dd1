"""4. DAG operations: validate + topological order + levels + critical path, on graphs of growing size.

Random DAGs of 1,000, 10,000 and 100,000 tasks, each depending on about 3 random earlier tasks
(Poisson, so E ≈ 3 V), listed in shuffled order; and a chain of 10,000 (the deepest possible graph:
nothing may recurse). Times are CPU time (the medians of several rounds), so other processes on a shared
machine count less.

Growth: time(10 V) ÷ time(V); linear is 10, V log V about 12 to 13. But a 100,000-task graph no longer
fits the CPU caches, so even one plain pass over it costs more per edge than over 10,000 tasks. The same
run therefore times such a pass (one dictionary lookup per edge, the basic step of all four operations)
and reports the growth in units of that pass; if it stays near 1 as the graph grows, the operations
scale linearly and the rest of the raw growth is the memory system.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable

from bench.common import Result, median, rounded
from bench.graphs import Graph, chain, random_dag
from paicli.plan import dag

NAME = "dag"
TITLE = "DAG operations"


def run(quick: bool = False) -> Result:
    sizes = [100, 1000] if quick else [1000, 10_000, 100_000]
    chain_length = 1000 if quick else 10_000
    result = Result(NAME, TITLE)
    totals: dict[int, float] = {}
    passes: dict[int, float] = {}
    for size in sizes:
        graph = random_dag(size, 3.0, seed=size)
        rounds = 3 if size >= 100_000 else 5
        totals[size], passes[size] = _measure(result, f"random {size:,}", graph, rounds=rounds)
        limit = 1000.0 if size == 100_000 else None
        result.add(f"random {size:,}: all four", totals[size] * 1000, "ms", at_most=limit)
    chain_total, _ = _measure(result, f"chain {chain_length:,}", chain(chain_length), rounds=5)
    result.add(f"chain {chain_length:,}: all four", chain_total * 1000, "ms")
    for smaller, larger in itertools.pairwise(sizes):
        result.add(f"growth {larger:,} ÷ {smaller:,}, raw", totals[larger] / totals[smaller])
        normalized = (totals[larger] / passes[larger]) / (totals[smaller] / passes[smaller])
        result.add(f"growth {larger:,} ÷ {smaller:,}, in graph passes", normalized, at_most=1.5)
    return result


def _operations(graph: Graph, durations: dict[str, float]) -> dict[str, Callable[[], object]]:
    return {
        "validate": lambda: dag.validate(graph),
        "topological_order": lambda: dag.topological_order(graph),
        "levels": lambda: dag.levels(graph),
        "critical_path": lambda: dag.critical_path(graph, durations),
    }


def _one_pass(graph: Graph) -> object:
    """The basic step of all four operations, once per edge: look a dependency up in the graph."""
    return sum(1 for deps in graph.values() for dep in deps if dep in graph)


def _cpu_seconds(operation: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        operation()
        samples.append(time.process_time() - start)
    return median(samples)


def _measure(result: Result, label: str, graph: Graph, *, rounds: int) -> tuple[float, float]:
    """The four operations' total and one plain pass over the graph, in CPU seconds; details noted."""
    rng = random.Random(len(graph))
    durations = {task: rng.uniform(0.1, 2.0) for task in graph}
    per_operation = {name: _cpu_seconds(op, rounds) for name, op in _operations(graph, durations).items()}
    one_pass = _cpu_seconds(lambda: _one_pass(graph), rounds)
    total = sum(per_operation.values())
    result.details[label] = {
        "tasks": len(graph),
        "edges": sum(len(deps) for deps in graph.values()),
        "rounds": rounds,
        **{f"{name}_ms": rounded(seconds * 1000) for name, seconds in per_operation.items()},
        "one_pass_ms": rounded(one_pass * 1000),
        "all_four_in_passes": rounded(total / one_pass) if one_pass else None,
    }
    return total, one_pass
