import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("1h30m", 5400), ("2d 4h", 187200), ("45s", 45), ("0s", 0), ("1d2h3m4s", 93784), ("90m", 5400),
])
def test_parse(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1", "h", "1x", "30m1h", "1h1h", "-1h", "1h  2m", "1 h", " 1h", "1.5h", "1h,2m"])
def test_parse_refuses(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "text"), [(5400, "1h30m"), (86401, "1d1s"), (0, "0s"), (59, "59s"), (3600, "1h")])
def test_format(seconds, text):
    assert format_duration(seconds) == text


def test_round_trip():
    for seconds in range(0, 200_000, 997):
        assert parse_duration(format_duration(seconds)) == seconds


def test_format_refuses_negative():
    with pytest.raises(ValueError):
        format_duration(-1)
