"""Durations as text."""

import re

_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_PATTERN = re.compile(r"(?=.)(?:(\d+)d ?)?(?:(\d+)h ?)?(?:(\d+)m ?)?(?:(\d+)s)?")


def parse_duration(text: str) -> int:
    match = _PATTERN.fullmatch(text)
    if not match or text.endswith(" "):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(v) * size for v, (_, size) in zip(match.groups(), _UNITS) if v is not None)


def format_duration(seconds: int) -> str:
    if seconds < 0:
        raise ValueError("negative duration")
    parts = []
    for unit, size in _UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
