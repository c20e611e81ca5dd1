"""How paicli words a count for people: `1 line`, `2 lines`, `1,200 files`, never `line(s)`."""

from __future__ import annotations


def counted(number: int, one: str, many: str | None = None) -> str:
    """`number` with its noun in the right form (`many` defaults to `one` + "s"), thousands grouped."""
    return f"{number:,} {one if number == 1 else (many or one + 's')}"
