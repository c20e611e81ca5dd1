"""Quantities on hand per SKU, and holds on them."""


class OutOfStock(Exception):
    pass


class Warehouse:
    def __init__(self):
        self.on_hand = {}
        self.holds = []  # [order_id, sku, quantity, expires_at]

    def receive(self, sku: str, quantity: int) -> None:
        if quantity < 1:
            raise ValueError("quantity must be positive")
        self.on_hand[sku] = self.on_hand.get(sku, 0) + quantity

    def available(self, sku: str) -> int:
        held = sum(q for _, s, q, _ in self.holds if s == sku)
        return self.on_hand.get(sku, 0) - held

    def take(self, sku: str, quantity: int) -> None:
        if self.available(sku) < quantity:
            raise OutOfStock(sku)
        self.on_hand[sku] -= quantity

    def reserve(self, sku: str, quantity: int, order_id, expires_at) -> None:
        if self.available(sku) < quantity:
            raise OutOfStock(sku)
        self.holds.append([order_id, sku, quantity, expires_at])

    def drop_holds(self, order_id) -> list:
        dropped = [h for h in self.holds if h[0] == order_id]
        self.holds = [h for h in self.holds if h[0] != order_id]
        return dropped

    def release_expired(self, now) -> list:
        expired = sorted({h[0] for h in self.holds if h[3] <= now})
        self.holds = [h for h in self.holds if h[3] > now]
        return expired

    def skus(self) -> list:
        return sorted(self.on_hand)
