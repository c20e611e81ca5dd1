"""Known units: name -> (dimension, factor, offset) with base = value * factor + offset."""

UNITS = {
    "m": ("length", 1.0, 0.0),
    "km": ("length", 1000.0, 0.0),
    "cm": ("length", 0.01, 0.0),
    "mi": ("length", 1609.344, 0.0),
    "g": ("mass", 1.0, 0.0),
    "kg": ("mass", 1000.0, 0.0),
    "lb": ("mass", 453.59237, 0.0),
    "K": ("temperature", 1.0, 0.0),
    "C": ("temperature", 1.0, 273.15),
    "F": ("temperature", 5 / 9, 273.15 - 32 * 5 / 9),
}
ALIASES = {"°C": "C", "°F": "F", "degC": "C", "degF": "F"}


def lookup(name: str):
    try:
        return UNITS[ALIASES.get(name, name)]
    except KeyError:
        raise ValueError(f"unknown unit {name!r}") from None
