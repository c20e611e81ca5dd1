"""The few statistics the eval report needs, standard library only: a Wilson score interval for a pass
rate and medians that tolerate missing values."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

Z_95 = 1.959963984540054  # the two-sided 95 % quantile of the standard normal


def wilson(passed: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for `passed` successes in `runs` trials (95 % by default).

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0/n or n/n, which matters
    for the small counts of an eval suite. No runs: the interval is everything, (0, 1)."""
    if runs < 0 or not 0 <= passed <= runs:
        raise ValueError(f"wilson: {passed} passes out of {runs} runs")
    if runs == 0:
        return 0.0, 1.0
    p = passed / runs
    z2 = z * z
    centre = (p + z2 / (2 * runs)) / (1 + z2 / runs)
    half = z / (1 + z2 / runs) * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs))
    return max(0.0, centre - half), min(1.0, centre + half)


def median_of(values: Iterable[float | None]) -> float | None:
    """The median of the values that are there (None is skipped); None when none is."""
    present = [value for value in values if value is not None and math.isfinite(value)]
    return statistics.median(present) if present else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator when both are known and the denominator is positive."""
    if numerator is None or denominator is None or denominator <= 0 or numerator < 0:
        return None
    return numerator / denominator
