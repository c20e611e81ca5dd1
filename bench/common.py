"""What every benchmark shares: its result (named metrics with targets), statistics, the machine it ran
on, the table printed to stdout and the JSON files written to bench/results/."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "bench" / "results"

Value = float | int | str | None


@dataclass
class Metric:
    name: str
    value: Value
    unit: str = ""
    target: str = ""  # shown in the table, e.g. "≤ 1.05"
    ok: bool | None = None  # None: no target


@dataclass
class Result:
    """One benchmark's outcome: metrics for the table, `details` (raw numbers) for the JSON file."""

    name: str
    title: str
    metrics: list[Metric] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def add(
        self,
        name: str,
        value: Value,
        unit: str = "",
        *,
        at_most: float | None = None,
        at_least: float | None = None,
    ) -> Metric:
        """Adds a metric; `at_most` / `at_least` make it a target that passes or fails."""
        target, ok = "", None
        if isinstance(value, int | float) and not isinstance(value, bool):
            if at_most is not None:
                target, ok = f"≤ {at_most:g}{unit and ' ' + unit}", value <= at_most
            elif at_least is not None:
                target, ok = f"≥ {at_least:g}{unit and ' ' + unit}", value >= at_least
        metric = Metric(name, value, unit, target, ok)
        self.metrics.append(metric)
        return metric

    @property
    def missed(self) -> list[Metric]:
        return [metric for metric in self.metrics if metric.ok is False]


# ---- statistics -------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linearly interpolated between the closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class Stopwatch:
    """Wall and CPU time (this process, all threads) of a `with` block, in seconds."""

    def __enter__(self) -> Stopwatch:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        self.wall = self.cpu = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def rounded(value: float, digits: int = 4) -> float:
    """Keeps JSON files readable: a few significant digits."""
    if not math.isfinite(value) or value == 0:
        return value
    return round(value, max(0, digits - 1 - math.floor(math.log10(abs(value)))))


# ---- the machine --------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "nproc": usable,
        "cpu_model": model,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(terse=True),
        "load_average": [round(x, 2) for x in load],
    }


def calibration_ms(rounds: int = 5) -> float:
    """CPU time of a fixed pure-Python workload (build, sum and sort a 200,000-entry dict), median: a yardstick
    to compare the absolute figures of two machines."""
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        table = {f"key{i}": i * 2 for i in range(200_000)}
        sum(table.values())
        sorted(table, reverse=True)
        samples.append(time.process_time() - start)
    return round(median(samples) * 1000, 1)


def machine_line(info: dict[str, Any]) -> str:
    load = ", ".join(f"{x:g}" for x in info["load_average"])
    line = (
        f"{info['nproc']} CPUs ({info['cpu_model']}), {info['implementation']} {info['python']}, "
        f"{info['platform']}, load average {load}"
    )
    if "calibration_ms" in info:
        line += f", calibration {info['calibration_ms']:g} ms"
    return line


# ---- output ---------------------------------------------------------------------------------------------


def format_value(value: Value, unit: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if not math.isfinite(value):
            text = str(value)
        elif abs(value) < 1:
            text = f"{value:.3g}"
        elif abs(value) < 10:
            text = f"{value:.3f}".rstrip("0").rstrip(".")  # 1.052: ratios near a target need the third digit
        elif abs(value) < 100:
            text = f"{value:.1f}"
        else:
            text = f"{value:,.0f}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    return f"{text} {unit}".rstrip()


def table(results: Sequence[Result]) -> str:
    rows = [("benchmark", "metric", "value", "target", "")]
    for result in results:
        for number, metric in enumerate(result.metrics):
            mark = {True: "ok", False: "MISSED", None: ""}[metric.ok]
            name = result.name if number == 0 else ""
            rows.append((name, metric.name, format_value(metric.value, metric.unit), metric.target, mark))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def write_results(results: Sequence[Result], info: dict[str, Any], folder: Path, command: str) -> list[Path]:
    """One JSON file per benchmark plus `latest.json` holding all of them; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    paths = []
    for result in results:
        path = folder / f"{result.name}.json"
        path.write_text(json.dumps({"when": stamp, "command": command, "machine": info, **asdict(result)}, indent=2))
        paths.append(path)
    combined = {"when": stamp, "command": command, "machine": info, "results": [asdict(r) for r in results]}
    latest = folder / "latest.json"
    latest.write_text(json.dumps(combined, indent=2))
    paths.append(latest)
    return paths
