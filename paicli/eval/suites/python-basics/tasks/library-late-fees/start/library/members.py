"""People who borrow."""

from dataclasses import dataclass


@dataclass
class Member:
    id: int
    name: str
