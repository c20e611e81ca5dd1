"""Reading a quantity such as "3.5 km" or "21 °C"."""

import re

from units.registry import ALIASES, lookup

_QUANTITY = re.compile(r"\s*(-?\d+(?:\.\d+)?)(?:\s+([A-Za-z]+)|\s*(°[CF]|deg[CF]))\s*")


def parse_quantity(text: str):
    match = _QUANTITY.fullmatch(text)
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    value, unit = float(match.group(1)), match.group(2) or match.group(3)
    unit = ALIASES.get(unit, unit)
    lookup(unit)
    return value, unit
