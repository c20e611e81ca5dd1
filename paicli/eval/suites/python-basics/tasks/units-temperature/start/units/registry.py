"""Known units: name -> (dimension, factor to the dimension's base unit)."""

UNITS = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "cm": ("length", 0.01),
    "mi": ("length", 1609.344),
    "g": ("mass", 1.0),
    "kg": ("mass", 1000.0),
    "lb": ("mass", 453.59237),
}


def lookup(name: str):
    try:
        return UNITS[name]
    except KeyError:
        raise ValueError(f"unknown unit {name!r}") from None
