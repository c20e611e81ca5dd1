import pytest

from roman import from_roman, to_roman


@pytest.mark.parametrize("number", [1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999])
def test_round_trip(number):
    assert from_roman(to_roman(number)) == number


def test_every_number_round_trips():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_known_values():
    assert from_roman("MCMXCIV") == 1994 and from_roman("XLII") == 42


@pytest.mark.parametrize("text", ["", "iv", "IIII", "VX", "IC", "MMMM", "XIIV", "A", "VV", "CMC", "IXI"])
def test_invalid_text(text):
    with pytest.raises(ValueError):
        from_roman(text)


@pytest.mark.parametrize("number", [0, -3, 4000])
def test_out_of_range(number):
    with pytest.raises(ValueError):
        to_roman(number)
