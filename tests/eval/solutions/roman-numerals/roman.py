"""Roman numerals."""

_VALUES = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number: int) -> str:
    if not 1 <= number <= 3999:
        raise ValueError(f"{number} is outside 1..3999")
    parts = []
    for value, letters in _VALUES:
        while number >= value:
            parts.append(letters)
            number -= value
    return "".join(parts)


_ALL = {to_roman(n): n for n in range(1, 4000)}


def from_roman(text: str) -> int:
    try:
        return _ALL[text]
    except KeyError:
        raise ValueError(f"not a Roman numeral: {text!r}") from None
