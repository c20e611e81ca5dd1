import pytest

from rle import decode, encode


def test_encode():
    assert encode("aaabccdddd") == "3ab2c4d"
    assert encode("") == ""
    assert encode("  !!") == "2 2!"
    assert encode("x" * 12) == "12x"


def test_decode():
    assert decode("3ab2c4d") == "aaabccdddd"
    assert decode("12x") == "x" * 12
    assert decode("") == ""


@pytest.mark.parametrize("text", ["abc", "aAaA", "hello   world", "zz" * 30 + "q"])
def test_round_trip(text):
    assert decode(encode(text)) == text


def test_digits_refused():
    with pytest.raises(ValueError):
        encode("a1")


@pytest.mark.parametrize("text", ["3", "ab4", "1a", "0a", "01a"])
def test_bad_encodings(text):
    with pytest.raises(ValueError):
        decode(text)
