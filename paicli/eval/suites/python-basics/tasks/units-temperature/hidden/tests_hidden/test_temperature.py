import pytest

from units.convert import convert
from units.parse import parse_quantity
from units.registry import UNITS


@pytest.mark.parametrize(("value", "source", "target", "expected"), [
    (100, "C", "F", 212), (32, "F", "C", 0), (0, "K", "C", -273.15), (-40, "C", "F", -40),
    (300, "K", "F", 80.33), (20, "C", "K", 293.15), (451, "F", "F", 451),
])
def test_temperatures(value, source, target, expected):
    assert convert(value, source, target) == pytest.approx(expected, abs=0.01)


def test_existing_units_unchanged():
    assert convert(5, "km", "mi") == pytest.approx(3.10685596)
    assert all(unit in UNITS for unit in ("m", "km", "kg", "K", "C", "F"))


@pytest.mark.parametrize(("text", "expected"), [
    ("21.5 °C", (21.5, "C")), ("70°F", (70.0, "F")), ("-3 degC", (-3.0, "C")), ("10degF", (10.0, "F")),
    ("5 K", (5.0, "K")),
])
def test_parse_spellings(text, expected):
    assert parse_quantity(text) == expected


def test_errors():
    with pytest.raises(ValueError):
        convert(1, "C", "m")
    with pytest.raises(ValueError):
        convert(-300, "C", "K")
    with pytest.raises(ValueError):
        convert(-1, "K", "C")
