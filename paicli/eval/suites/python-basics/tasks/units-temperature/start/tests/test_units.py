import pytest

from units.convert import convert
from units.parse import parse_quantity


def test_lengths_and_masses():
    assert convert(1, "km", "m") == 1000
    assert convert(3, "mi", "km") == pytest.approx(4.828032)
    assert convert(2, "kg", "lb") == pytest.approx(4.40924524)


def test_parse():
    assert parse_quantity("3.5 km") == (3.5, "km") and parse_quantity("-2 g") == (-2.0, "g")
    with pytest.raises(ValueError):
        parse_quantity("3.5 parsecs")


def test_dimensions_do_not_mix():
    with pytest.raises(ValueError):
        convert(1, "kg", "m")
