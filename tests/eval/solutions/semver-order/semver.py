"""Semantic versions."""

import functools
import re

_NUM = r"0|[1-9][0-9]*"
_ID = r"[0-9A-Za-z-]+"
_PATTERN = re.compile(
    rf"({_NUM})\.({_NUM})\.({_NUM})(?:-({_ID}(?:\.{_ID})*))?(?:\+({_ID}(?:\.{_ID})*))?"
)


@functools.total_ordering
class Version:
    def __init__(self, text, major, minor, patch, pre):
        self.text, self.major, self.minor, self.patch, self.pre = text, major, minor, patch, pre

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _PATTERN.fullmatch(text)
        if not match:
            raise ValueError(f"not a semantic version: {text!r}")
        pre = tuple(match.group(4).split(".")) if match.group(4) else ()
        if any(p.isdigit() and len(p) > 1 and p.startswith("0") for p in pre):
            raise ValueError(f"leading zero in {text!r}")
        return cls(text, int(match.group(1)), int(match.group(2)), int(match.group(3)), pre)

    def _key(self):
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other):
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self.text
