"""What a shop sells and what a customer holds."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    price_cents: int


@dataclass
class Cart:
    lines: dict = field(default_factory=dict)  # sku -> (Item, quantity)

    def add(self, item: Item, quantity: int = 1) -> None:
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        _, held = self.lines.get(item.sku, (item, 0))
        self.lines[item.sku] = (item, held + quantity)

    def remove(self, sku: str) -> None:
        self.lines.pop(sku, None)
