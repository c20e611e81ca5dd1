"""The dependency graphs the benchmarks run: id → the ids it depends on, plus task latencies.

Everything random takes a seed, so every run of a benchmark sees the same graphs.
"""

from __future__ import annotations

import math
import random

Graph = dict[str, list[str]]
Latencies = dict[str, float]


def diamond() -> tuple[Graph, Latencies]:
    graph = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}
    return graph, {"a": 0.2, "b": 0.5, "c": 0.3, "d": 0.2}


def fan_out_join(width: int = 16, seed: int = 16) -> tuple[Graph, Latencies]:
    """root → `width` tasks side by side → join; the middle tasks take 0.1 to 0.5 s."""
    rng = random.Random(seed)
    middle = [f"m{i:02d}" for i in range(width)]
    graph: Graph = {"root": [], **{m: ["root"] for m in middle}, "join": list(middle)}
    latencies = {"root": 0.1, "join": 0.1, **{m: round(rng.uniform(0.1, 0.5), 3) for m in middle}}
    return graph, latencies


def skewed_chains(slow: float = 1.0, fast: float = 0.1) -> tuple[Graph, Latencies]:
    """Three chains of three tasks; chain i has its slow task at level i. Level-by-level batches wait for
    the slow task of every level (3 × slow); the critical path has only one slow task."""
    graph: Graph = {}
    latencies: Latencies = {}
    for chain in range(3):
        for level in range(3):
            task = f"c{chain}l{level}"
            graph[task] = [f"c{chain}l{level - 1}"] if level else []
            latencies[task] = slow if level == chain else fast
    return graph, latencies


def random_layered(tasks: int = 30, layers: int = 6, seed: int = 30) -> tuple[Graph, Latencies]:
    """`tasks` tasks in `layers` layers; each task after the first layer depends on 1 to 3 tasks of earlier
    layers (mostly the previous one). Latencies are lognormal (median 0.15 s, σ 0.6), cut to 0.03..1.5 s."""
    rng = random.Random(seed)
    per_layer = [tasks // layers + (1 if i < tasks % layers else 0) for i in range(layers)]
    graph: Graph = {}
    latencies: Latencies = {}
    placed: list[list[str]] = []
    for layer, count in enumerate(per_layer):
        names = [f"r{layer}_{i}" for i in range(count)]
        for name in names:
            deps: list[str] = []
            if layer:
                wanted = rng.randint(1, 3)
                pool = placed[layer - 1] if rng.random() < 0.75 else [t for row in placed for t in row]
                deps = sorted(set(rng.sample(pool, min(wanted, len(pool)))))
            graph[name] = deps
            latencies[name] = round(min(1.5, max(0.03, rng.lognormvariate(math.log(0.15), 0.6))), 3)
        placed.append(names)
    return graph, latencies


def wide(tasks: int) -> Graph:
    return {f"w{i}": [] for i in range(tasks)}


def chains(count: int, length: int) -> Graph:
    graph: Graph = {}
    for chain in range(count):
        for step in range(length):
            graph[f"k{chain}_{step}"] = [f"k{chain}_{step - 1}"] if step else []
    return graph


def chain(length: int) -> Graph:
    return {f"s{i}": [f"s{i - 1}"] if i else [] for i in range(length)}


def lattice(rows: int, columns: int) -> Graph:
    """A grid: each cell depends on the cell above and the cell to its left."""
    graph: Graph = {}
    for row in range(rows):
        for column in range(columns):
            deps = ([f"g{row - 1}_{column}"] if row else []) + ([f"g{row}_{column - 1}"] if column else [])
            graph[f"g{row}_{column}"] = deps
    return graph


def crossed_chains(count: int, length: int, seed: int = 7) -> tuple[Graph, Latencies]:
    """`count` chains; every third step also waits for the previous step of the next chain (a join).
    Latencies 5 to 25 ms: many short tasks, so many dispatches."""
    rng = random.Random(seed)
    graph: Graph = {}
    for step in range(length):
        for k in range(count):
            deps = [f"x{k}_{step - 1}"] if step else []
            if step and step % 3 == 0:
                deps.append(f"x{(k + 1) % count}_{step - 1}")
            graph[f"x{k}_{step}"] = deps
    return graph, {task: round(rng.uniform(0.005, 0.025), 4) for task in graph}


def random_dag(nodes: int, mean_dependencies: float = 3.0, seed: int = 1) -> Graph:
    """`nodes` tasks, each depending on about `mean_dependencies` random earlier ones (so E ≈ 3 V), listed
    in a shuffled order so a topological sort has real work to do."""
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(nodes)]
    graph: Graph = {}
    for index, name in enumerate(names):
        wanted = min(index, _poisson(rng, mean_dependencies))
        graph[name] = [names[rng.randrange(index)] for _ in range(wanted)]
    order = list(graph)
    rng.shuffle(order)
    return {name: graph[name] for name in order}


def _poisson(rng: random.Random, mean: float) -> int:
    limit, product, count = math.exp(-mean), rng.random(), 0
    while product > limit:
        product *= rng.random()
        count += 1
    return count
