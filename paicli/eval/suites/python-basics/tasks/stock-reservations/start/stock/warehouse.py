"""Quantities on hand per SKU."""


class OutOfStock(Exception):
    pass


class Warehouse:
    def __init__(self):
        self.on_hand = {}

    def receive(self, sku: str, quantity: int) -> None:
        if quantity < 1:
            raise ValueError("quantity must be positive")
        self.on_hand[sku] = self.on_hand.get(sku, 0) + quantity

    def take(self, sku: str, quantity: int) -> None:
        if self.on_hand.get(sku, 0) < quantity:
            raise OutOfStock(sku)
        self.on_hand[sku] -= quantity

    def skus(self) -> list:
        return sorted(self.on_hand)
