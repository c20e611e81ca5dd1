"""Converting between units of one dimension."""

from units.registry import lookup


def convert(value: float, source: str, target: str) -> float:
    source_dimension, source_factor, source_offset = lookup(source)
    target_dimension, target_factor, target_offset = lookup(target)
    if source_dimension != target_dimension:
        raise ValueError(f"cannot convert {source_dimension} to {target_dimension}")
    base = value * source_factor + source_offset
    if source_dimension == "temperature" and base < -1e-9:
        raise ValueError("below absolute zero")
    return (base - target_offset) / target_factor
