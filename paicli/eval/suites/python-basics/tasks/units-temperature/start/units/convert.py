"""Converting between units of one dimension."""

from units.registry import lookup


def convert(value: float, source: str, target: str) -> float:
    source_dimension, source_factor = lookup(source)
    target_dimension, target_factor = lookup(target)
    if source_dimension != target_dimension:
        raise ValueError(f"cannot convert {source_dimension} to {target_dimension}")
    return value * source_factor / target_factor
