"""People who borrow."""

from dataclasses import dataclass


@dataclass
class Member:
    id: int
    name: str
    balance_cents: int = 0

    def pay(self, cents: int) -> None:
        if cents <= 0 or cents > self.balance_cents:
            raise ValueError(f"cannot pay {cents} of {self.balance_cents}")
        self.balance_cents -= cents
