"""Text to typed values."""

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def to_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"not a boolean: {text!r}")


def to_int(text: str) -> int:
    return int(text.strip())


def to_str(text: str) -> str:
    return text.strip()


CONVERTERS = {bool: to_bool, int: to_int, str: to_str}
