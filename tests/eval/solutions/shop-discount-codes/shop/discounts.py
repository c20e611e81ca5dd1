"""Discount codes."""

from dataclasses import dataclass


@dataclass(frozen=True)
class DiscountCode:
    code: str
    percent: int = 0
    amount_cents: int = 0
    min_subtotal_cents: int = 0

    def __post_init__(self):
        if bool(self.percent) == bool(self.amount_cents):
            raise ValueError("give exactly one of percent and amount_cents")
        if self.percent and not 1 <= self.percent <= 100:
            raise ValueError("percent must be 1 to 100")
        if self.amount_cents < 0:
            raise ValueError("amount_cents must be positive")

    def discount_for(self, subtotal_cents: int) -> int:
        if subtotal_cents < self.min_subtotal_cents:
            return 0
        if self.percent:
            return subtotal_cents * self.percent // 100
        return min(self.amount_cents, subtotal_cents)
